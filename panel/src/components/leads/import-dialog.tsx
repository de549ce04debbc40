import { useState } from 'react';
import Papa from 'papaparse';
import { useQueryClient } from '@tanstack/react-query';
import { importLeads, leadKeys } from '../../queries/leads';
import { Modal } from '../ui/dialog';
import { Button } from '../ui/button';
import { FormError } from '../ui/states';

/** Rows per request: the API takes up to 10,000 per import (CONTRACT §3). */
const CHUNK = 10_000;
const KNOWN = ['name', 'email', 'phone', 'company', 'website', 'source', 'tags', 'projectId'];

interface Totals {
  created: number;
  merged: number;
  rejected: { row: number; error: string }[];
}

/**
 * CSV import: the file is read here for a preview of its columns, checked by the API without
 * changing anything (a dry run: what would be created, merged, rejected), then imported in parts
 * of 10,000 rows with progress. The server parses the CSV itself; each part is sent as CSV text.
 */
export function ImportDialog({ orgId, open, onOpenChange }: { orgId: string; open: boolean; onOpenChange: (open: boolean) => void }) {
  const queryClient = useQueryClient();
  const [file, setFile] = useState<{ name: string; header: string[]; rows: string[][] } | null>(null);
  const [check, setCheck] = useState<Totals | null>(null);
  const [done, setDone] = useState<Totals | null>(null);
  const [progress, setProgress] = useState<{ sent: number; total: number } | null>(null);
  const [error, setError] = useState<unknown>(null);

  const reset = () => {
    setFile(null);
    setCheck(null);
    setDone(null);
    setProgress(null);
    setError(null);
  };

  const read = (picked: File | undefined) => {
    reset();
    if (!picked) return;
    Papa.parse<string[]>(picked, {
      skipEmptyLines: 'greedy',
      complete: (result) => {
        const [header, ...rows] = result.data;
        if (!header || rows.length === 0) setError(new Error('The file has no rows under its header line.'));
        else setFile({ name: picked.name, header, rows });
      },
      error: (e) => setError(e),
    });
  };

  /** Sends the rows in parts; each part's row numbers are shifted back to the file's. */
  const send = async (dryRun: boolean): Promise<Totals> => {
    const totals: Totals = { created: 0, merged: 0, rejected: [] };
    const rows = file!.rows;
    for (let from = 0; from < rows.length; from += CHUNK) {
      const part = Papa.unparse({ fields: file!.header, data: rows.slice(from, from + CHUNK) });
      const result = await importLeads(orgId, part, dryRun);
      totals.created += result.created;
      totals.merged += result.merged;
      totals.rejected.push(...result.rejected.map((r) => ({ ...r, row: r.row + from })));
      if (!dryRun) setProgress({ sent: Math.min(rows.length, from + CHUNK), total: rows.length });
    }
    return totals;
  };

  const run = async (dryRun: boolean) => {
    setError(null);
    try {
      if (dryRun) setCheck(await send(true));
      else {
        setProgress({ sent: 0, total: file!.rows.length });
        setDone(await send(false));
        await queryClient.invalidateQueries({ queryKey: leadKeys.all(orgId) });
      }
    } catch (e) {
      setError(e);
    }
  };

  const unknown = file?.header.filter((h) => !KNOWN.includes(h.trim()) && !h.startsWith('custom.')) ?? [];
  const busy = progress !== null && done === null && error === null;
  return (
    <Modal
      open={open}
      onOpenChange={(next) => {
        onOpenChange(next);
        if (!next) reset();
      }}
      title="Import leads from CSV"
      description="A header line names the columns: name, email, phone, company, website, source, tags; other columns become custom fields. Each row is de-duplicated like a single new lead."
      wide
    >
      <div className="space-y-4">
        <label className="block text-sm font-medium text-slate-700">
          CSV file
          <input type="file" accept=".csv,text/csv" className="mt-1 block w-full text-sm" onChange={(e) => read(e.target.files?.[0])} disabled={busy} />
        </label>
        {file ? (
          <section aria-label="Preview">
            <p className="mb-2 text-sm text-slate-700">
              {file.name}: {file.rows.length.toLocaleString()} rows, {file.header.length} columns
              {unknown.length ? ` (${unknown.join(', ')} will be custom fields)` : ''}.
            </p>
            <div className="max-h-56 overflow-auto rounded ring-1 ring-slate-200">
              <table aria-label="First rows of the file" className="min-w-full text-xs">
                <thead className="bg-slate-50">
                  <tr>
                    {file.header.map((h) => (
                      <th key={h} scope="col" className="px-2 py-1 text-left font-semibold">
                        {h}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {file.rows.slice(0, 5).map((row, i) => (
                    <tr key={i} className="border-t border-slate-100">
                      {file.header.map((_, j) => (
                        <td key={j} className="px-2 py-1">
                          {row[j]}
                        </td>
                      ))}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </section>
        ) : null}
        {check && !done ? <Outcome title="Check" totals={check} would /> : null}
        {progress && !done ? (
          <div>
            <p className="text-sm text-slate-700">
              Importing… {progress.sent.toLocaleString()} of {progress.total.toLocaleString()} rows
            </p>
            <progress className="mt-1 w-full" aria-label="Import progress" max={progress.total} value={progress.sent} />
          </div>
        ) : null}
        {done ? <Outcome title="Imported" totals={done} /> : null}
        <FormError error={error} />
        <div className="flex justify-end gap-2">
          {done ? (
            <Button
              variant="primary"
              onClick={() => {
                onOpenChange(false);
                reset();
              }}
            >
              Done
            </Button>
          ) : (
            <>
              <Button onClick={() => void run(true)} disabled={!file || busy}>
                Check file
              </Button>
              <Button variant="primary" onClick={() => void run(false)} disabled={!file || busy}>
                Import {file ? file.rows.length.toLocaleString() : ''} rows
              </Button>
            </>
          )}
        </div>
      </div>
    </Modal>
  );
}

function Outcome({ title, totals, would }: { title: string; totals: Totals; would?: boolean }) {
  return (
    <section aria-label={title} role="status" className="rounded-md bg-slate-50 p-3 text-sm">
      <p>
        {would ? 'Would create' : 'Created'} <strong>{totals.created.toLocaleString()}</strong> new {plural(totals.created, 'lead')},
        {would ? ' would merge' : ' merged'} <strong>{totals.merged.toLocaleString()}</strong> into existing ones,
        <strong> {totals.rejected.length.toLocaleString()}</strong> {plural(totals.rejected.length, 'row')} rejected.
      </p>
      {totals.rejected.length ? (
        <ul className="mt-2 max-h-32 overflow-auto text-xs text-red-700">
          {totals.rejected.slice(0, 100).map((r) => (
            <li key={r.row}>
              Row {r.row}: {r.error}
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}

function plural(n: number, word: string): string {
  return n === 1 ? word : `${word}s`;
}
