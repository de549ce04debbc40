import { useState } from 'react';
import type { Schemas } from '../../api/client';
import { useStartRun } from '../../queries/workflows';
import { Modal } from '../ui/dialog';
import { Button } from '../ui/button';
import { Checkbox, TextArea } from '../ui/field';
import { FormError } from '../ui/states';
import { jsonError } from './definition';

/** What the input stands for, by trigger type. */
function inputHint(workflow: Schemas['Workflow']): string {
  const type = workflow.trigger.type;
  const trigger = workflow.nodes.find((n) => n.id === workflow.trigger.nodeId) as { name?: string } | undefined;
  if (type === 'trigger.event')
    return 'This workflow starts on events: the input stands for the event, e.g. { "payload": { "lead": { "id": "…", "name": "…" } } }.';
  if (type === 'trigger.webhook') return 'The input stands for the body a webhook call would send.';
  return trigger?.name ? `The trigger's data item. Trigger: "${trigger.name}".` : "The trigger's data item: every step after it reads it.";
}

/**
 * Starts a run (POST …/workflows/:id/run) with an input object and optionally in test mode
 * (publishing, messaging and outgoing webhook steps only show what they would send).
 */
export function RunDialog({
  orgId,
  workflow,
  open,
  onOpenChange,
  onStarted,
}: {
  orgId: string;
  workflow: Schemas['Workflow'];
  open: boolean;
  onOpenChange: (open: boolean) => void;
  onStarted: (runId: string) => void;
}) {
  const [input, setInput] = useState('{}');
  const [testMode, setTestMode] = useState(false);
  const [inputError, setInputError] = useState<string | null>(null);
  const run = useStartRun(orgId, workflow.id);
  const submit = () => {
    let value: unknown;
    try {
      value = input.trim() === '' ? {} : JSON.parse(input);
    } catch (error) {
      setInputError(jsonError(input, error));
      return;
    }
    if (!value || typeof value !== 'object' || Array.isArray(value)) {
      setInputError('The input must be a JSON object, e.g. { "topic": "spring sale" }');
      return;
    }
    setInputError(null);
    run.mutate(
      { input: value as Record<string, unknown>, testMode },
      {
        onSuccess: (created) => {
          onOpenChange(false);
          onStarted(created.id);
        },
      },
    );
  };
  return (
    <Modal
      open={open}
      onOpenChange={(next) => {
        onOpenChange(next);
        if (!next) run.reset();
      }}
      title="Run workflow"
      description={`Start "${workflow.name}" now and follow it on the run page.`}
      wide
    >
      <form
        className="space-y-4"
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
      >
        <TextArea
          label="Input (JSON)"
          rows={8}
          spellCheck={false}
          value={input}
          onChange={(e) => {
            setInput(e.target.value);
            setInputError(null);
          }}
          error={inputError ?? undefined}
          hint={inputHint(workflow)}
        />
        <div>
          <Checkbox label="Test mode" checked={testMode} onChange={(e) => setTestMode(e.target.checked)} />
          <p className="mt-1 pl-6 text-xs text-slate-500">
            Publishing, messaging, CRM sync and outgoing webhook steps do not send anything; they show what they would have sent.
          </p>
        </div>
        {workflow.active ? null : (
          <p className="text-sm text-slate-600">The workflow is inactive: its trigger does not fire on its own, but you can run it by hand.</p>
        )}
        <FormError error={run.error} />
        <div className="flex justify-end gap-2">
          <Button onClick={() => onOpenChange(false)}>Cancel</Button>
          <Button type="submit" variant="primary" disabled={run.isPending}>
            {testMode ? 'Start test run' : 'Start run'}
          </Button>
        </div>
      </form>
    </Modal>
  );
}
