import { useState, type FormEvent } from 'react';
import { ApiError } from '../../api/client';
import { TextField } from '../ui/field';

export interface LeadFields {
  name: string;
  email: string;
  phone: string;
  company: string;
  website: string;
  source: string;
  tags: string;
}

export const EMPTY_LEAD: LeadFields = { name: '', email: '', phone: '', company: '', website: '', source: '', tags: '' };

/** The lead's fields as the API takes them: blanks left out (create) or cleared to null (edit). */
export function leadBody(fields: LeadFields, blank: 'omit' | 'null') {
  const value = (v: string) => (v.trim() === '' ? (blank === 'omit' ? undefined : null) : v.trim());
  return {
    name: value(fields.name),
    email: value(fields.email),
    phone: value(fields.phone),
    company: value(fields.company),
    website: value(fields.website),
    source: value(fields.source),
    tags: fields.tags
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean),
  };
}

/** The editable fields of a lead, with the API's messages under the fields it named. */
export function LeadForm({
  initial,
  error,
  disabled,
  onSubmit,
  children,
}: {
  initial: LeadFields;
  error: unknown;
  disabled?: boolean;
  onSubmit: (fields: LeadFields) => void;
  children: React.ReactNode;
}) {
  const [fields, setFields] = useState(initial);
  const errors = error instanceof ApiError ? error.fieldErrors : {};
  const field = (key: keyof LeadFields, label: string, extra: React.InputHTMLAttributes<HTMLInputElement> = {}) => (
    <TextField
      label={label}
      value={fields[key]}
      onChange={(e) => setFields({ ...fields, [key]: e.target.value })}
      error={errors[key]}
      disabled={disabled}
      {...extra}
    />
  );
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onSubmit(fields);
  };
  return (
    <form className="space-y-3" onSubmit={submit}>
      <div className="grid grid-cols-2 gap-3">
        {field('name', 'Name', { autoComplete: 'off' })}
        {field('email', 'Email', { type: 'email' })}
        {field('phone', 'Phone', { type: 'tel' })}
        {field('company', 'Company')}
        {field('website', 'Website')}
        {field('source', 'Source')}
      </div>
      {field('tags', 'Tags', { placeholder: 'vip, fair' })}
      {children}
    </form>
  );
}
