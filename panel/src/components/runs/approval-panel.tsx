import { useState } from 'react';
import { Link } from '@tanstack/react-router';
import { useQuery } from '@tanstack/react-query';
import type { Schemas } from '../../api/client';
import { approvalQuery, useDecideApproval } from '../../queries/approvals';
import { formatDateTime } from '../../lib/format';
import { SidePanel } from '../ui/dialog';
import { Button } from '../ui/button';
import { Checkbox, TextArea } from '../ui/field';
import { Badge } from '../ui/page';
import { FormError } from '../ui/states';
import { QueryState } from '../ui/query-state';
import { jsonError } from '../workflows/definition';

type Approval = Schemas['Approval'];

/** The edited payload as the API takes it: an object or an array of objects (CONTRACT §4). */
export function parsePayload(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, error: jsonError(text, error) };
  }
  const isObject = (v: unknown) => Boolean(v) && typeof v === 'object' && !Array.isArray(v);
  if (isObject(value) || (Array.isArray(value) && value.every(isObject))) return { ok: true, value };
  return { ok: false, error: 'The payload must be a JSON object or an array of objects (the items that continue down the approved branch)' };
}

/**
 * One approval beside the queue (`?approval=:id`): what is asked, the payload, and for a pending
 * one the decision — approve (optionally with an edited payload that replaces the items going on)
 * or reject, each with an optional comment.
 */
export function ApprovalPanel({ orgId, approvalId, canWrite, onClose }: { orgId: string; approvalId: string; canWrite: boolean; onClose: () => void }) {
  const approval = useQuery(approvalQuery(orgId, approvalId));
  const a = approval.data;
  return (
    <SidePanel open onOpenChange={(open) => !open && onClose()} title={a ? a.title : 'Approval'}>
      <QueryState query={approval}>
        {(a) => (
          <div className="space-y-5">
            <dl className="grid grid-cols-2 gap-3 text-sm">
              <div>
                <dt className="text-slate-500">Status</dt>
                <dd>
                  <span role="status" aria-label="Approval status">
                    <Badge>{a.status}</Badge>
                  </span>
                </dd>
              </div>
              <div>
                <dt className="text-slate-500">Requested</dt>
                <dd>{formatDateTime(a.createdAt)}</dd>
              </div>
              <div>
                <dt className="text-slate-500">Expires</dt>
                <dd>{a.expiresAt ? formatDateTime(a.expiresAt) : 'Never'}</dd>
              </div>
              <div>
                <dt className="text-slate-500">From</dt>
                <dd>
                  {a.runId ? (
                    <Link to="/orgs/$orgId/runs/$runId" params={{ orgId, runId: a.runId }} className="text-indigo-700 underline">
                      run{a.nodeId ? `, step ${a.nodeId}` : ''}
                    </Link>
                  ) : (
                    'an agent'
                  )}
                </dd>
              </div>
            </dl>
            {a.description ? <p className="text-sm whitespace-pre-wrap text-slate-700">{a.description}</p> : null}
            {a.payload !== null && a.payload !== undefined ? (
              <section aria-label="Payload">
                <h3 className="mb-1 text-sm font-semibold text-slate-900">Payload</h3>
                <pre className="max-h-64 overflow-auto rounded bg-slate-50 p-3 text-xs text-slate-800">{JSON.stringify(a.payload, null, 2)}</pre>
              </section>
            ) : null}
            {a.status === 'PENDING' ? (
              canWrite ? (
                <Decide orgId={orgId} approval={a} />
              ) : (
                <p className="text-sm text-slate-600">Waiting for a decision by a member of the organization.</p>
              )
            ) : (
              <Decision approval={a} />
            )}
          </div>
        )}
      </QueryState>
    </SidePanel>
  );
}

function Decision({ approval: a }: { approval: Approval }) {
  return (
    <section aria-label="Decision" className="rounded-md bg-slate-50 p-3 text-sm text-slate-700">
      <p>
        {a.status === 'EXPIRED' ? 'Expired without a decision' : `${a.status === 'APPROVED' ? 'Approved' : 'Rejected'}`}
        {a.by ? ` by ${a.by}` : ''}
        {a.resolvedAt ? `, ${formatDateTime(a.resolvedAt)}` : ''}.
      </p>
      {a.comment ? <p className="mt-1">Comment: “{a.comment}”</p> : null}
      {a.editedPayload !== null && a.editedPayload !== undefined ? (
        <>
          <p className="mt-2 font-medium">Edited payload</p>
          <pre className="mt-1 max-h-48 overflow-auto rounded bg-white p-2 text-xs">{JSON.stringify(a.editedPayload, null, 2)}</pre>
        </>
      ) : null}
    </section>
  );
}

function Decide({ orgId, approval }: { orgId: string; approval: Approval }) {
  const [comment, setComment] = useState('');
  const [editing, setEditing] = useState(false);
  const [payload, setPayload] = useState(() => JSON.stringify(approval.payload ?? {}, null, 2));
  const [payloadError, setPayloadError] = useState<string | null>(null);
  const { approve, reject } = useDecideApproval(orgId, approval.id);
  const busy = approve.isPending || reject.isPending;
  const trimmed = comment.trim() || undefined;

  const onApprove = () => {
    if (!editing) {
      approve.mutate({ comment: trimmed });
      return;
    }
    const parsed = parsePayload(payload);
    if (!parsed.ok) {
      setPayloadError(parsed.error);
      return;
    }
    approve.mutate({ comment: trimmed, editedPayload: parsed.value });
  };

  return (
    <form
      aria-label="Decision"
      className="space-y-4 border-t border-slate-200 pt-4"
      onSubmit={(e) => {
        e.preventDefault();
        onApprove();
      }}
    >
      <TextArea
        label="Comment (optional)"
        rows={2}
        maxLength={4000}
        value={comment}
        onChange={(e) => setComment(e.target.value)}
        className="block w-full rounded-md border-0 px-3 py-2 text-sm text-slate-900 ring-1 ring-inset ring-slate-300 focus:ring-2 focus:ring-indigo-600"
      />
      <div>
        <Checkbox
          label="Edit the payload before approving"
          checked={editing}
          onChange={(e) => {
            setEditing(e.target.checked);
            setPayloadError(null);
          }}
        />
        {editing ? (
          <div className="mt-2">
            <TextArea
              label="Edited payload (JSON)"
              rows={10}
              spellCheck={false}
              value={payload}
              onChange={(e) => {
                setPayload(e.target.value);
                setPayloadError(null);
              }}
              error={payloadError ?? undefined}
              hint="Replaces the items that continue down the approved branch: an object or an array of objects."
            />
          </div>
        ) : null}
      </div>
      <FormError error={approve.error ?? reject.error} />
      <div className="flex justify-end gap-2">
        <Button variant="danger" disabled={busy} onClick={() => reject.mutate({ comment: trimmed })}>
          Reject
        </Button>
        <Button type="submit" variant="primary" disabled={busy}>
          {editing ? 'Approve with edits' : 'Approve'}
        </Button>
      </div>
    </form>
  );
}
