import { describe, expect, it, vi, afterEach } from 'vitest';
import { cleanup, render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { SortTh } from './table';
import { Pagination } from './pagination';
import { ErrorState } from './states';
import { ApiError } from '../../api/client';

afterEach(cleanup);

describe('sortable column headers', () => {
  it('say how the list is sorted and sort ascending first, then descending', async () => {
    const onSort = vi.fn();
    const { rerender } = render(
      <table>
        <thead>
          <tr>
            <SortTh field="name" label="Name" sort="-createdAt" onSort={onSort} />
          </tr>
        </thead>
      </table>,
    );
    expect(screen.getByRole('columnheader')).toHaveAttribute('aria-sort', 'none');
    await userEvent.click(screen.getByRole('button', { name: /Name/ }));
    expect(onSort).toHaveBeenLastCalledWith('name');
    rerender(
      <table>
        <thead>
          <tr>
            <SortTh field="name" label="Name" sort="name" onSort={onSort} />
          </tr>
        </thead>
      </table>,
    );
    expect(screen.getByRole('columnheader')).toHaveAttribute('aria-sort', 'ascending');
    await userEvent.click(screen.getByRole('button', { name: /Name/ }));
    expect(onSort).toHaveBeenLastCalledWith('-name');
  });
});

describe('pagination', () => {
  it('counts what is shown, says "about" for an estimated total, and stops at the ends', async () => {
    const onPage = vi.fn();
    render(<Pagination page={1} pageSize={20} total={45} onPage={onPage} />);
    expect(screen.getByText('1–20 of 45')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Previous' })).toBeDisabled();
    await userEvent.click(screen.getByRole('button', { name: 'Next' }));
    expect(onPage).toHaveBeenCalledWith(2);
    cleanup();
    render(<Pagination page={3} pageSize={20} total={10_001} estimate onPage={onPage} />);
    expect(screen.getByText('41–60 of about 10,001')).toBeInTheDocument();
  });
});

describe('error states', () => {
  it("show a 403 as a missing permission, with the API's reason", () => {
    render(<ErrorState error={new ApiError(403, { statusCode: 403, code: 'FORBIDDEN', error: 'Forbidden', message: 'Viewers cannot change leads' })} />);
    expect(screen.getByRole('alert')).toHaveTextContent('You do not have access to this');
    expect(screen.getByRole('alert')).toHaveTextContent('Viewers cannot change leads');
  });
});
