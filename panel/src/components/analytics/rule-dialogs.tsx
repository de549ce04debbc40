import { useState, type FormEvent } from 'react';
import { ApiError } from '../../api/client';
import { useDeleteRule, useSaveRule, type Rule } from '../../queries/analytics';
import { Modal } from '../ui/dialog';
import { Button } from '../ui/button';
import { SelectField, TextField } from '../ui/field';
import { FormError } from '../ui/states';
import { metricSpec, SOURCE_LABELS } from './data';
import {
  COMPARE_LABELS,
  COMPARES,
  describeRule,
  emptyRule,
  fieldsOfRule,
  NAME_MAX,
  RULE_METRICS,
  ruleBody,
  ruleErrors,
  WINDOW_LABELS,
  WINDOWS,
  type Compare,
  type RuleFields,
  type RuleMetric,
  type Window,
} from './rules';

interface IntegrationOption {
  id: string;
  name: string;
}

/**
 * Creates a rule (no `rule`) or edits one. Checked before sending (the message under the field);
 * the API's own 400 is shown the same way, and its message beside the buttons.
 */
export function RuleDialog({
  orgId,
  rule,
  integrations,
  defaultIntegrationId,
  onClose,
}: {
  orgId: string;
  rule?: Rule;
  integrations: readonly IntegrationOption[];
  defaultIntegrationId?: string;
  onClose: () => void;
}) {
  const [f, setF] = useState<RuleFields>(() => (rule ? fieldsOfRule(rule) : emptyRule(defaultIntegrationId ?? '')));
  const [tried, setTried] = useState(false);
  const set = <K extends keyof RuleFields>(key: K, value: RuleFields[K]) => setF((prev) => ({ ...prev, [key]: value }));
  const save = useSaveRule(orgId, rule?.id ?? null);
  const local = tried ? ruleErrors(f) : {};
  const remote = save.error instanceof ApiError ? save.error.fieldErrors : {};
  const errors: Partial<Record<string, string>> = { ...remote, ...local };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setTried(true);
    if (Object.keys(ruleErrors(f)).length === 0) save.mutate(ruleBody(f), { onSuccess: onClose });
  };
  const pct = f.compare === 'pct_change';
  const unit = metricSpec(f.metric)?.label.toLowerCase() ?? 'value';
  const { name: _name, ...valueErrors } = ruleErrors(f);
  const preview = Object.keys(valueErrors).length === 0 ? describeRule(ruleBody(f)) : null;

  return (
    <Modal
      open
      onOpenChange={(open) => !open && onClose()}
      title={rule ? `Edit ${rule.name}` : 'New rule'}
      description="Checked after every sync. It notifies you (and emits analytics.threshold) when it starts firing, not again until it is back to normal."
    >
      <form className="space-y-4" aria-label="Rule" noValidate onSubmit={submit}>
        <TextField
          label="Name"
          required
          maxLength={NAME_MAX}
          value={f.name}
          error={errors.name}
          placeholder="Organic clicks dropped"
          onChange={(e) => set('name', e.target.value)}
        />
        <SelectField
          label="Google account"
          value={f.integrationId}
          error={errors.integrationId}
          options={[{ value: '', label: 'All Google accounts' }, ...integrations.map((i) => ({ value: i.id, label: i.name }))]}
          onChange={(e) => set('integrationId', e.target.value)}
        />
        <div className="grid gap-4 sm:grid-cols-2">
          <SelectField
            label="Metric"
            value={f.metric}
            error={errors.metric}
            options={RULE_METRICS.map((m) => ({ value: m, label: `${metricSpec(m)?.label ?? m} (${SOURCE_LABELS[metricSpec(m)?.source ?? 'ga4']})` }))}
            onChange={(e) => set('metric', e.target.value as RuleMetric)}
          />
          <SelectField
            label="Window"
            value={f.window}
            error={errors.window}
            options={WINDOWS.map((w) => ({ value: w, label: WINDOW_LABELS[w] }))}
            hint={
              pct
                ? 'Compared with the same number of days just before.'
                : 'The latest synced day, or the last 7 or 28 days added up (CTR and position averaged).'
            }
            onChange={(e) => set('window', e.target.value as Window)}
          />
        </div>
        <div className="grid gap-4 sm:grid-cols-2">
          <SelectField
            label="Condition"
            value={f.compare}
            error={errors.compare}
            options={COMPARES.map((c) => ({ value: c, label: COMPARE_LABELS[c] }))}
            onChange={(e) => set('compare', e.target.value as Compare)}
          />
          <TextField
            label="Threshold"
            inputMode="decimal"
            required
            value={f.threshold}
            error={errors.threshold}
            placeholder={pct ? '20' : '500'}
            hint={pct ? 'In percent, up or down: 20 fires on a rise or a fall of 20 % or more.' : thresholdHint(f.metric, unit)}
            onChange={(e) => set('threshold', e.target.value)}
          />
        </div>
        {pct ? (
          <TextField
            label="Minimum baseline"
            inputMode="decimal"
            value={f.minBaseline}
            error={errors.minBaseline}
            placeholder="100"
            hint="Optional: no alert while the earlier period is below this, so a jump from 2 to 5 does not count as +150 %."
            onChange={(e) => set('minBaseline', e.target.value)}
          />
        ) : null}
        {preview ? (
          <p className="rounded-md bg-slate-50 px-3 py-2 text-sm text-slate-700" aria-live="polite">
            Fires on: {preview}.
          </p>
        ) : null}
        <FormError error={save.error} />
        <div className="flex justify-end gap-2">
          <Button onClick={onClose}>Cancel</Button>
          <Button type="submit" variant="primary" disabled={save.isPending}>
            {save.isPending ? 'Saving…' : rule ? 'Save rule' : 'Create rule'}
          </Button>
        </div>
      </form>
    </Modal>
  );
}

function thresholdHint(metric: string, unit: string): string {
  if (metric === 'gsc.ctr') return 'In percent, such as 2.5.';
  if (metric === 'gsc.position') return 'Position 1 is the top of the results: above 10 means past the first page.';
  return `The number of ${unit}.`;
}

export function DeleteRuleDialog({ orgId, rule, onClose }: { orgId: string; rule: Rule; onClose: () => void }) {
  const remove = useDeleteRule(orgId, rule.id);
  return (
    <Modal
      open
      onOpenChange={(open) => !open && onClose()}
      title={`Delete ${rule.name}?`}
      description="It stops watching the metric. Alerts it already sent stay in the notifications."
    >
      <FormError error={remove.error} />
      <div className="mt-4 flex justify-end gap-2">
        <Button onClick={onClose}>Cancel</Button>
        <Button variant="danger" disabled={remove.isPending} onClick={() => remove.mutate(undefined, { onSuccess: onClose })}>
          Delete rule
        </Button>
      </div>
    </Modal>
  );
}
