import { describe, expect, it } from 'vitest';
import { passwordProblems } from './passwords';
import { sortRows } from './sort';

describe('password checks in the browser', () => {
  it('catch what needs no server: empty, short, unchanged, and a confirmation that differs', () => {
    expect(passwordProblems({ newPassword: '', confirm: '' })).toEqual({ newPassword: 'Enter a new password.' });
    expect(passwordProblems({ newPassword: 'short', confirm: 'short' })).toEqual({ newPassword: 'At least 8 characters.' });
    expect(passwordProblems({ newPassword: 'same old secret', confirm: 'same old secret', currentPassword: 'same old secret' }).newPassword).toMatch(
      /different/,
    );
    expect(passwordProblems({ newPassword: 'a new passphrase', confirm: 'a new passphrase!' })).toEqual({ confirm: 'The two passwords differ.' });
    expect(passwordProblems({ newPassword: 'a new passphrase', confirm: 'a new passphrase', currentPassword: 'old one here' })).toEqual({});
  });
});

describe('sorting the short lists', () => {
  const rows = [
    { name: 'beta', at: '2026-01-02', used: null },
    { name: 'Alpha', at: '2026-01-03', used: '2026-02-01' },
    { name: 'gamma 10', at: '2026-01-01', used: '2026-03-01' },
    { name: 'gamma 9', at: '2026-01-04', used: null },
  ];
  const fields = { name: (r: (typeof rows)[number]) => r.name, at: (r: (typeof rows)[number]) => r.at, used: (r: (typeof rows)[number]) => r.used };

  it('sorts by a field either way, case-insensitively and with numbers in order, leaving missing values last', () => {
    expect(sortRows(rows, 'name', fields).map((r) => r.name)).toEqual(['Alpha', 'beta', 'gamma 9', 'gamma 10']);
    expect(sortRows(rows, '-at', fields).map((r) => r.name)).toEqual(['gamma 9', 'Alpha', 'beta', 'gamma 10']);
    expect(sortRows(rows, '-used', fields).map((r) => r.used)).toEqual(['2026-03-01', '2026-02-01', null, null]);
    expect(sortRows(rows, 'unknown', fields)).toEqual(rows);
  });
});
