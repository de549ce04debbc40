import { useState, type FormEvent } from 'react';
import { useQuery } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { ApiError, type Schemas } from '../../api/client';
import { agentTypesQuery, useRunAgent } from '../../queries/agents';
import { Modal } from '../ui/dialog';
import { Button } from '../ui/button';
import { SelectField, TextArea, TextField } from '../ui/field';
import { FormError } from '../ui/states';
import { parseInput, typeLabel, type AgentTypeName } from './agent-types';

type Mode = 'adhoc' | 'saved';

/**
 * Run an agent once: an ad-hoc one (a type, a task, a model) or a saved one (its settings, a
 * task). The run starts in the background (202); the page of the run shows its steps as they come.
 */
export function RunAgentDialog({
  orgId,
  open,
  onOpenChange,
  agents,
  agentId,
}: {
  orgId: string;
  open: boolean;
  onOpenChange: (open: boolean) => void;
  agents: readonly Schemas['Agent'][];
  /** A saved agent to run (the Run button of its row). */
  agentId?: string;
}) {
  const navigate = useNavigate();
  const types = useQuery(agentTypesQuery(orgId));
  const [mode, setMode] = useState<Mode>(agentId ? 'saved' : 'adhoc');
  const [savedId, setSavedId] = useState(agentId ?? agents[0]?.id ?? '');
  const [type, setType] = useState<string>('MARKET_ANALYST');
  const [task, setTask] = useState('');
  const [input, setInput] = useState('');
  const [modelId, setModelId] = useState('offline');
  const [inputError, setInputError] = useState<string | null>(null);

  const run = useRunAgent(orgId);
  const errors = run.error instanceof ApiError ? run.error.fieldErrors : {};
  const saved = agents.find((a) => a.id === savedId);
  const typeInfo = types.data?.find((t) => t.type === (mode === 'saved' ? saved?.type : type));

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const parsed = parseInput(input);
    setInputError(parsed.error ?? null);
    if (parsed.error) return;
    const body = { task: task.trim(), ...(parsed.value ? { input: parsed.value } : {}) };
    run.mutate(
      mode === 'saved'
        ? { kind: 'saved', agentId: savedId, body }
        : { kind: 'adhoc', body: { ...body, type: type as AgentTypeName, ...(modelId.trim() ? { modelId: modelId.trim() } : {}) } },
      {
        onSuccess: async (agentRun) => {
          onOpenChange(false);
          await navigate({ to: '/orgs/$orgId/agents/runs/$runId', params: { orgId, runId: agentRun.id } });
        },
      },
    );
  };

  return (
    <Modal open={open} onOpenChange={onOpenChange} title="Run an agent" description="The run starts at once; you watch its steps as they happen." wide>
      <form className="space-y-4" onSubmit={submit} noValidate>
        <fieldset>
          <legend className="mb-1 block text-sm font-medium text-slate-700">Agent</legend>
          <div className="flex gap-4 text-sm">
            <label className="inline-flex items-center gap-2">
              <input type="radio" name="mode" checked={mode === 'adhoc'} onChange={() => setMode('adhoc')} /> Ad hoc
            </label>
            <label className="inline-flex items-center gap-2">
              <input type="radio" name="mode" checked={mode === 'saved'} disabled={agents.length === 0} onChange={() => setMode('saved')} /> Saved
            </label>
          </div>
        </fieldset>
        {mode === 'saved' ? (
          <SelectField
            label="Saved agent"
            value={savedId}
            onChange={(e) => setSavedId(e.target.value)}
            options={agents.map((a) => ({ value: a.id, label: `${a.name} (${typeLabel(a.type)})` }))}
          />
        ) : (
          <div className="grid gap-4 sm:grid-cols-2">
            <SelectField
              label="Type"
              value={type}
              onChange={(e) => setType(e.target.value)}
              error={errors.type}
              options={(types.data ?? [{ type }]).map((t) => ({ value: t.type, label: typeLabel(t.type) }))}
            />
            <TextField
              label="Model"
              value={modelId}
              onChange={(e) => setModelId(e.target.value)}
              maxLength={160}
              error={errors.modelId}
              hint="offline needs no network; e.g. openai:gpt-4.1-mini when configured"
            />
          </div>
        )}
        {typeInfo ? (
          <p className="text-sm text-slate-600">
            {typeInfo.description}
            {typeInfo.tools.length ? <span className="block text-xs text-slate-500">Tools: {typeInfo.tools.map((t) => t.name).join(', ')}</span> : null}
          </p>
        ) : null}
        <TextArea
          label="Task"
          rows={3}
          value={task}
          onChange={(e) => setTask(e.target.value)}
          required
          maxLength={8000}
          error={errors.task}
          hint="What the agent should do, in a sentence or two."
        />
        <TextArea
          label="Input (JSON, optional)"
          rows={3}
          value={input}
          onChange={(e) => setInput(e.target.value)}
          error={inputError ?? errors.input}
          placeholder='{ "urls": ["https://example.com"] }'
        />
        {/* A field's own message stands next to it; the rest here. */}
        <FormError error={Object.keys(errors).length ? null : run.error} />
        <div className="flex justify-end gap-2">
          <Button onClick={() => onOpenChange(false)}>Cancel</Button>
          <Button type="submit" variant="primary" disabled={run.isPending || !task.trim() || (mode === 'saved' && !savedId)}>
            Start run
          </Button>
        </div>
      </form>
    </Modal>
  );
}
