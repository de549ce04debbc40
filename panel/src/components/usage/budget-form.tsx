import { useState, type FormEvent } from 'react';
import { ApiError } from '../../api/client';
import { useSaveBudget } from '../../queries/usage';
import { Button } from '../ui/button';
import { TextField } from '../ui/field';
import { FormError } from '../ui/states';

/**
 * The monthly budget (owners and admins): a limit in USD, or none. New runs are refused while it is
 * spent; a warning goes out at 80 %.
 */
export function BudgetForm({ orgId, limitUsd }: { orgId: string; limitUsd: number | null }) {
  const [value, setValue] = useState(limitUsd === null ? '' : String(limitUsd));
  const [localError, setLocalError] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const save = useSaveBudget(orgId, (data) => {
    setSaved(data.monthlyLimitUsd === null ? 'Budget removed.' : 'Budget saved.');
    setValue(data.monthlyLimitUsd === null ? '' : String(data.monthlyLimitUsd));
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setSaved(null);
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n) || n < 0) {
      setLocalError('Enter an amount in USD, 0 or more.');
      return;
    }
    setLocalError(null);
    save.mutate(n);
  };
  const apiError = save.error instanceof ApiError ? save.error.fieldErrors.monthlyLimitUsd : undefined;
  return (
    <form onSubmit={submit} className="space-y-3" noValidate>
      <div className="flex flex-wrap items-end gap-2">
        <div className="w-48">
          <TextField
            label="Monthly budget (USD)"
            type="number"
            min={0}
            step="0.01"
            value={value}
            onChange={(e) => setValue(e.target.value)}
            error={localError ?? apiError}
          />
        </div>
        <Button type="submit" variant="primary" disabled={save.isPending}>
          Save budget
        </Button>
        {limitUsd !== null ? (
          <Button
            variant="ghost"
            disabled={save.isPending}
            onClick={() => {
              setSaved(null);
              setLocalError(null);
              save.mutate(null);
            }}
          >
            Remove budget
          </Button>
        ) : null}
      </div>
      <FormError error={apiError ? null : save.error} />
      {saved && !save.isPending ? (
        <p role="status" className="text-sm text-emerald-700">
          {saved}
        </p>
      ) : null}
    </form>
  );
}
