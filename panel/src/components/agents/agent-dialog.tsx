import { useState, type FormEvent } from 'react';
import { useQuery } from '@tanstack/react-query';
import { ApiError, type Schemas } from '../../api/client';
import { agentTypesQuery, useSaveAgent } from '../../queries/agents';
import { Modal } from '../ui/dialog';
import { Button } from '../ui/button';
import { SelectField, TextArea, TextField } from '../ui/field';
import { FormError } from '../ui/states';
import { typeLabel, type AgentTypeName } from './agent-types';

interface Fields {
  name: string;
  type: string;
  instructions: string;
  modelId: string;
  maxSteps: string;
  budgetUsd: string;
}

function fieldsOf(agent: Schemas['Agent'] | null): Fields {
  return {
    name: agent?.name ?? '',
    type: agent?.type ?? 'MARKET_ANALYST',
    instructions: agent?.instructions ?? '',
    modelId: agent?.modelId ?? '',
    maxSteps: agent?.maxSteps === null || agent?.maxSteps === undefined ? '' : String(agent.maxSteps),
    budgetUsd: agent?.budgetUsd === null || agent?.budgetUsd === undefined ? '' : String(agent.budgetUsd),
  };
}

/** The body the API takes: blanks are "use the default" (null), numbers are numbers. */
export function agentBody(f: Fields) {
  return {
    name: f.name.trim(),
    type: f.type as AgentTypeName,
    instructions: f.instructions.trim() || null,
    modelId: f.modelId.trim() || null,
    maxSteps: f.maxSteps.trim() === '' ? null : Number(f.maxSteps),
    budgetUsd: f.budgetUsd.trim() === '' ? null : Number(f.budgetUsd),
  };
}

/** Create a saved agent, or change one (`agent` given). */
export function AgentDialog({
  orgId,
  agent,
  open,
  onOpenChange,
}: {
  orgId: string;
  agent: Schemas['Agent'] | null;
  open: boolean;
  onOpenChange: (open: boolean) => void;
}) {
  const types = useQuery(agentTypesQuery(orgId));
  const [fields, setFields] = useState<Fields>(() => fieldsOf(agent));
  const save = useSaveAgent(orgId, agent?.id ?? null);
  const errors = save.error instanceof ApiError ? save.error.fieldErrors : {};
  const set = (key: keyof Fields) => (e: { target: { value: string } }) => setFields((f) => ({ ...f, [key]: e.target.value }));
  const description = types.data?.find((t) => t.type === fields.type)?.description;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate(agentBody(fields), { onSuccess: () => onOpenChange(false) });
  };
  return (
    <Modal
      open={open}
      onOpenChange={onOpenChange}
      title={agent ? `Edit ${agent.name}` : 'New agent'}
      description="A saved agent is an agent type with your own instructions, model, step limit and budget."
      wide
    >
      <form className="space-y-4" onSubmit={submit} noValidate>
        <div className="grid gap-4 sm:grid-cols-2">
          <TextField label="Name" value={fields.name} onChange={set('name')} required maxLength={200} error={errors.name} />
          <SelectField
            label="Type"
            value={fields.type}
            onChange={set('type')}
            error={errors.type}
            options={(types.data ?? [{ type: fields.type }]).map((t) => ({ value: t.type, label: typeLabel(t.type) }))}
          />
        </div>
        {description ? <p className="text-sm text-slate-600">{description}</p> : null}
        <TextArea
          label="Instructions"
          rows={4}
          value={fields.instructions}
          onChange={set('instructions')}
          maxLength={8000}
          error={errors.instructions}
          hint="Added to the type's own instructions, e.g. your market, tone or what to focus on."
        />
        <div className="grid gap-4 sm:grid-cols-3">
          <TextField
            label="Model"
            value={fields.modelId}
            onChange={set('modelId')}
            placeholder="offline"
            maxLength={160}
            error={errors.modelId}
            hint="Blank: the service's default. offline needs no network."
          />
          <TextField
            label="Step limit"
            type="number"
            min={1}
            max={50}
            value={fields.maxSteps}
            onChange={set('maxSteps')}
            error={errors.maxSteps}
            hint="1–50; blank: default"
          />
          <TextField
            label="Budget per run (USD)"
            type="number"
            min={0}
            step="0.01"
            value={fields.budgetUsd}
            onChange={set('budgetUsd')}
            error={errors.budgetUsd}
            hint="Blank: no limit of its own"
          />
        </div>
        {/* A field's own message stands next to it; the rest here. */}
        <FormError error={Object.keys(errors).length ? null : save.error} />
        <div className="flex justify-end gap-2">
          <Button onClick={() => onOpenChange(false)}>Cancel</Button>
          <Button type="submit" variant="primary" disabled={save.isPending}>
            {agent ? 'Save agent' : 'Create agent'}
          </Button>
        </div>
      </form>
    </Modal>
  );
}
