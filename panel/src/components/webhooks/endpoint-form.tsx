import { useState, type FormEvent } from 'react';
import { useQuery } from '@tanstack/react-query';
import { ApiError } from '../../api/client';
import { Checkbox, SelectField, TextField } from '../ui/field';
import { Button } from '../ui/button';
import { FormError } from '../ui/states';
import { projectsQuery } from '../../queries/settings';
import { EventPicker } from './event-picker';
import { isAll } from './events';

export interface EndpointFields {
  url: string;
  description: string;
  projectId: string;
  events: string[];
  active: boolean;
  secret: string;
}

export const EMPTY_ENDPOINT: EndpointFields = { url: '', description: '', projectId: '', events: [], active: true, secret: '' };

/** The body the API takes: blanks left out on create, cleared to null on edit. */
export function endpointBody(fields: EndpointFields, mode: 'create' | 'edit') {
  const description = fields.description.trim();
  return {
    url: fields.url.trim(),
    description: description === '' ? (mode === 'create' ? undefined : null) : description,
    projectId: fields.projectId === '' ? (mode === 'create' ? undefined : null) : fields.projectId,
    events: fields.events,
    active: fields.active,
    ...(mode === 'create' && fields.secret.trim() !== '' ? { secret: fields.secret.trim() } : {}),
  };
}

/** The fields of a webhook endpoint, with the API's messages under the fields it named. */
export function EndpointForm({
  orgId,
  initial,
  mode,
  error,
  pending,
  submitLabel,
  onSubmit,
  onCancel,
}: {
  orgId: string;
  initial: EndpointFields;
  mode: 'create' | 'edit';
  error: unknown;
  pending: boolean;
  submitLabel: string;
  onSubmit: (fields: EndpointFields) => void;
  onCancel: () => void;
}) {
  const [fields, setFields] = useState(initial);
  const projects = useQuery(projectsQuery(orgId));
  const errors = error instanceof ApiError ? error.fieldErrors : {};
  const eventsError = Object.entries(errors).find(([field]) => field.startsWith('events'))?.[1];
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (fields.events.length === 0) return;
    onSubmit(fields);
  };
  return (
    <form className="space-y-4" onSubmit={submit}>
      <TextField
        label="URL"
        type="url"
        required
        placeholder="https://example.com/hooks/automation"
        value={fields.url}
        onChange={(e) => setFields({ ...fields, url: e.target.value })}
        error={errors.url}
        hint="Receives a signed POST for each event. HTTPS in production."
      />
      <div className="grid grid-cols-1 gap-3 sm:grid-cols-2">
        <TextField
          label="Description"
          maxLength={500}
          value={fields.description}
          onChange={(e) => setFields({ ...fields, description: e.target.value })}
          error={errors.description}
          placeholder="CRM sync"
        />
        <SelectField
          label="Project"
          value={fields.projectId}
          onChange={(e) => setFields({ ...fields, projectId: e.target.value })}
          error={errors.projectId}
          hint="Only this project's events; all projects when left organization-wide."
          options={[{ value: '', label: 'Organization-wide (all projects)' }, ...(projects.data ?? []).map((p) => ({ value: p.id, label: p.name }))]}
        />
      </div>
      {mode === 'create' ? (
        <TextField
          label="Signing secret"
          autoComplete="off"
          maxLength={200}
          value={fields.secret}
          onChange={(e) => setFields({ ...fields, secret: e.target.value })}
          error={errors.secret}
          hint="Leave empty to have one generated. It is shown once, after creating."
        />
      ) : null}
      <EventPicker value={fields.events} onChange={(events) => setFields({ ...fields, events })} error={eventsError} />
      <Checkbox
        label="Active (an inactive endpoint receives nothing)"
        checked={fields.active}
        onChange={(e) => setFields({ ...fields, active: e.target.checked })}
      />
      <FormError error={error} />
      <div className="flex justify-end gap-2">
        <Button onClick={onCancel}>Cancel</Button>
        <Button type="submit" variant="primary" disabled={pending || (!isAll(fields.events) && fields.events.length === 0)}>
          {submitLabel}
        </Button>
      </div>
    </form>
  );
}
