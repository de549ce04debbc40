import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { ApiError, type Schemas } from '../../api/client';
import { useGeneratePosts } from '../../queries/content';
import { projectsQuery } from '../../queries/settings';
import { PLATFORMS, type Platform } from '../../../../src/shared/platforms.ts';
import { formatUsd } from '../../lib/format';
import { Modal } from '../ui/dialog';
import { Button } from '../ui/button';
import { Checkbox, SelectField, TextArea, TextField } from '../ui/field';
import { FormError } from '../ui/states';
import { PLATFORM_LABELS } from './preview';

type Result = { agentRunId: string; status: string; summary: string | null; usage: Record<string, unknown>; items: Schemas['Post'][] };

/**
 * Drafts written by the CONTENT_WRITER agent (`POST …/content/generate`): a topic, the platforms,
 * how many per platform and the language. The drafts land as DRAFT posts, listed here to open.
 */
export function GenerateDialog({
  orgId,
  open,
  onOpenChange,
  onOpenPost,
}: {
  orgId: string;
  open: boolean;
  onOpenChange: (open: boolean) => void;
  onOpenPost: (id: string) => void;
}) {
  const projects = useQuery(projectsQuery(orgId));
  const [topic, setTopic] = useState('');
  const [platforms, setPlatforms] = useState<Platform[]>(['LINKEDIN', 'X']);
  const [count, setCount] = useState(1);
  const [language, setLanguage] = useState('en');
  const [projectId, setProjectId] = useState('');
  const [result, setResult] = useState<Result | null>(null);
  const generate = useGeneratePosts(orgId, setResult);
  const close = (next: boolean) => {
    onOpenChange(next);
    if (!next) {
      setResult(null);
      generate.reset();
    }
  };
  const errors = generate.error instanceof ApiError ? generate.error.fieldErrors : {};
  const cost = typeof result?.usage.costUsd === 'number' ? result.usage.costUsd : null;
  return (
    <Modal
      open={open}
      onOpenChange={close}
      title="Generate drafts with AI"
      description="The content writer agent drafts posts about your topic; nothing is published until you approve it."
      wide
    >
      {result ? (
        <div className="space-y-4">
          <p role="status" className="rounded-md bg-emerald-50 p-3 text-sm text-emerald-900">
            {result.items.length} draft{result.items.length === 1 ? '' : 's'} written
            {cost !== null ? ` · cost ${formatUsd(cost)}` : ''}
            {typeof result.usage.modelId === 'string' ? ` · model ${result.usage.modelId}` : ''}.
          </p>
          {result.summary ? <p className="text-sm text-slate-600">{result.summary}</p> : null}
          <ul aria-label="Generated drafts" className="divide-y divide-slate-100 rounded-md ring-1 ring-slate-200">
            {result.items.map((post) => (
              <li key={post.id} className="flex items-start justify-between gap-3 p-3 text-sm">
                <div className="min-w-0">
                  <p className="text-xs font-medium text-slate-500">{PLATFORM_LABELS[post.platform]}</p>
                  <p className="line-clamp-3 text-slate-800">{post.body}</p>
                </div>
                <Button
                  size="sm"
                  onClick={() => {
                    close(false);
                    onOpenPost(post.id);
                  }}
                >
                  Open draft
                </Button>
              </li>
            ))}
          </ul>
          <div className="flex justify-end gap-2">
            <Button
              onClick={() => {
                setResult(null);
                generate.reset();
              }}
            >
              Generate more
            </Button>
            <Button variant="primary" onClick={() => close(false)}>
              Done
            </Button>
          </div>
        </div>
      ) : (
        <form
          className="space-y-4"
          onSubmit={(e) => {
            e.preventDefault();
            generate.mutate({ topic: topic.trim(), platforms, count, language: language.trim(), ...(projectId ? { projectId } : {}) });
          }}
        >
          <TextArea
            label="Topic"
            rows={3}
            required
            maxLength={1000}
            value={topic}
            error={errors.topic}
            placeholder="Our spring webinar on marketing automation, 12 March, free sign-up"
            onChange={(e) => setTopic(e.target.value)}
            className="font-sans"
          />
          <fieldset>
            <legend className="mb-1 text-sm font-medium text-slate-700">Platforms</legend>
            <div className="flex gap-4">
              {PLATFORMS.map((p) => (
                <Checkbox
                  key={p}
                  label={PLATFORM_LABELS[p]}
                  checked={platforms.includes(p)}
                  onChange={(e) => setPlatforms((prev) => (e.target.checked ? [...prev, p] : prev.filter((x) => x !== p)))}
                />
              ))}
            </div>
            {errors.platforms ? <p className="text-xs text-red-600">{errors.platforms}</p> : null}
          </fieldset>
          <div className="grid gap-3 sm:grid-cols-3">
            <TextField
              label="Drafts per platform"
              type="number"
              min={1}
              max={5}
              value={count}
              error={errors.count}
              onChange={(e) => setCount(Math.min(5, Math.max(1, Number(e.target.value) || 1)))}
            />
            <TextField
              label="Language"
              value={language}
              maxLength={40}
              error={errors.language}
              hint="A name or code: en, French, de"
              onChange={(e) => setLanguage(e.target.value)}
            />
            {(projects.data?.length ?? 0) > 1 ? (
              <SelectField
                label="Project"
                value={projectId}
                options={[{ value: '', label: 'Default project' }, ...(projects.data ?? []).map((p) => ({ value: p.id, label: p.name }))]}
                onChange={(e) => setProjectId(e.target.value)}
              />
            ) : null}
          </div>
          <FormError error={generate.error} />
          <div className="flex justify-end gap-2">
            <Button onClick={() => close(false)}>Cancel</Button>
            <Button type="submit" variant="primary" disabled={generate.isPending || !topic.trim() || platforms.length === 0 || language.trim().length < 2}>
              {generate.isPending ? 'Writing drafts…' : 'Generate drafts'}
            </Button>
          </div>
        </form>
      )}
    </Modal>
  );
}
