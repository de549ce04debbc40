import { describe, expect, it } from 'vitest';
import { aRole, assignableRoles } from './roles';

describe('roles', () => {
  it('let only owners hand out the owner role, and read well in sentences', () => {
    expect(assignableRoles('admin').map((r) => r.value)).toEqual(['admin', 'member', 'viewer']);
    expect(assignableRoles('owner').map((r) => r.value)).toEqual(['owner', 'admin', 'member', 'viewer']);
    expect([aRole('admin'), aRole('viewer'), aRole('owner')]).toEqual(['an admin', 'a viewer', 'an owner']);
  });
});
