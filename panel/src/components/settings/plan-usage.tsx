import type { Schemas } from '../../api/client';
import { Badge } from '../ui/page';

type Plan = Schemas['Plan'];
type Limit = keyof Plan['used'];

/** Every limit of CONTRACT §12, in the order shown, with what it counts. */
const LIMITS: { key: Limit; label: string; hint: string }[] = [
  { key: 'leads', label: 'Leads', hint: 'held now' },
  { key: 'members', label: 'Members', hint: 'held now' },
  { key: 'webhookEndpoints', label: 'Webhook endpoints', hint: 'held now' },
  { key: 'inboxes', label: 'Inboxes', hint: 'held now' },
  { key: 'runsPerMonth', label: 'Workflow runs', hint: 'this month (UTC)' },
  { key: 'agentRunsPerMonth', label: 'Agent runs', hint: 'this month (UTC)' },
  { key: 'campaignMessagesPerMonth', label: 'Campaign messages', hint: 'this month (UTC)' },
];

const FEATURE_LABELS: Record<string, string> = {
  workflows: 'Workflows',
  agents: 'Agents',
  content: 'Content',
  conversations: 'Conversations',
  campaigns: 'Campaigns',
  analytics: 'Analytics',
  webhooks: 'Webhooks',
};
const ALL_FEATURES = Object.keys(FEATURE_LABELS);

/** One limit: used of the limit as a bar (amber from 80 %, red when reached), or "Unlimited". */
function UsageBar({ label, hint, used, limit }: { label: string; hint: string; used: number; limit: number | undefined }) {
  const unlimited = limit === undefined;
  const percent = unlimited ? 0 : limit === 0 ? 100 : Math.min(100, Math.round((used / limit) * 100));
  const tone = unlimited ? 'bg-slate-300' : percent >= 100 ? 'bg-red-600' : percent >= 80 ? 'bg-amber-500' : 'bg-indigo-600';
  return (
    <div>
      <div className="flex items-baseline justify-between gap-2 text-sm">
        <span className="font-medium text-slate-800">
          {label} <span className="font-normal text-slate-500">{hint}</span>
        </span>
        <span className="tabular-nums text-slate-700">
          {unlimited ? `${used.toLocaleString()} · Unlimited` : `${used.toLocaleString()} / ${limit.toLocaleString()}`}
        </span>
      </div>
      <div
        role="progressbar"
        aria-label={label}
        aria-valuemin={0}
        aria-valuemax={unlimited ? undefined : limit}
        aria-valuenow={used}
        aria-valuetext={unlimited ? `${used} used, unlimited` : `${used} of ${limit}`}
        className="mt-1 h-2 overflow-hidden rounded-full bg-slate-100"
      >
        <div className={`h-full rounded-full ${tone}`} style={{ width: unlimited ? '0%' : `${percent}%` }} />
      </div>
    </div>
  );
}

/** The organization's plan (GET …/plan): its badge, its features and a usage bar per limit. */
export function PlanUsage({ plan }: { plan: Plan }) {
  return (
    <div className="grid max-w-4xl grid-cols-1 gap-5 lg:grid-cols-3">
      <section aria-labelledby="plan-title" className="rounded-lg bg-white p-5 shadow-xs ring-1 ring-slate-200">
        <h2 id="plan-title" className="mb-3 font-semibold text-slate-900">
          Plan
        </h2>
        <p>
          <Badge tone="violet">{plan.plan}</Badge>
        </p>
        <p className="mt-3 text-sm text-slate-600">
          {plan.plan === 'unlimited' ? 'This service has no plans configured: every feature, no limits.' : 'The operator of this service assigns plans.'}
        </p>
        <h3 className="mt-4 mb-2 text-sm font-medium text-slate-700">Features</h3>
        <ul className="space-y-1 text-sm">
          {ALL_FEATURES.map((f) => {
            const has = (plan.features as string[]).includes(f);
            return (
              <li key={f} className={has ? 'text-slate-900' : 'text-slate-400 line-through'}>
                <span aria-hidden="true">{has ? '✓ ' : '✗ '}</span>
                {FEATURE_LABELS[f]}
                <span className="sr-only">{has ? ' (included)' : ' (not included)'}</span>
              </li>
            );
          })}
        </ul>
      </section>
      <section aria-labelledby="usage-title" className="rounded-lg bg-white p-5 shadow-xs ring-1 ring-slate-200 lg:col-span-2">
        <h2 id="usage-title" className="mb-4 font-semibold text-slate-900">
          Usage
        </h2>
        <div className="space-y-4">
          {LIMITS.map((l) => (
            <UsageBar key={l.key} label={l.label} hint={l.hint} used={plan.used[l.key]} limit={plan.limits[l.key]} />
          ))}
        </div>
      </section>
    </div>
  );
}
