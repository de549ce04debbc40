import { useState, type ReactNode } from 'react';
import { Link } from '@tanstack/react-router';
import { Dialog } from 'radix-ui';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { ApiError, type Schemas } from '../../api/client';
import { allIntegrationsQuery, approvePost, createPost, deletePost, patchPost, postCache, postQuery, publishPost } from '../../queries/content';
import { projectsQuery } from '../../queries/settings';
import { MAX_MEDIA, PLATFORMS, type Platform } from '../../../../src/shared/platforms.ts';
import { allowed } from '../../../../src/shared/posts.ts';
import { formatDateTime, relative } from '../../lib/format';
import { Button } from '../ui/button';
import { SelectField, TextField } from '../ui/field';
import { Badge } from '../ui/page';
import { FormError } from '../ui/states';
import { QueryState } from '../ui/query-state';
import { browserTimeZone, fromLocalInput, isFuture, offsetName, toLocalInput } from './dates';
import { countPost, parseHashtags } from './length';
import { MediaPicker, useMediaItems } from './media-picker';
import { LengthCounter, PlatformPreviews, PLATFORM_LABELS } from './preview';

type Post = Schemas['Post'];
type Integration = Schemas['Integration'];

interface Fields {
  platform: Platform;
  projectId: string;
  integrationId: string;
  body: string;
  hashtags: string;
  mediaIds: string[];
  publishAt: string;
}

const EMPTY: Fields = { platform: 'LINKEDIN', projectId: '', integrationId: '', body: '', hashtags: '', mediaIds: [], publishAt: '' };

function fieldsOf(post: Post): Fields {
  return {
    platform: post.platform,
    projectId: post.projectId,
    integrationId: post.integrationId ?? '',
    body: post.body,
    hashtags: post.hashtags.join(' '),
    mediaIds: post.mediaIds,
    publishAt: toLocalInput(post.scheduledAt),
  };
}

/** What changed against the stored post, as a PATCH body (the body text separately: approval can carry it). */
function changes(post: Post, f: Fields): { patch: Record<string, unknown>; body?: string } {
  const patch: Record<string, unknown> = {};
  if (f.platform !== post.platform) patch.platform = f.platform;
  if (f.projectId && f.projectId !== post.projectId) patch.projectId = f.projectId;
  if ((f.integrationId || null) !== post.integrationId) patch.integrationId = f.integrationId || null;
  const tags = parseHashtags(f.hashtags);
  if (tags.join(' ') !== post.hashtags.join(' ')) patch.hashtags = tags;
  if (f.mediaIds.join() !== post.mediaIds.join()) patch.mediaIds = f.mediaIds;
  if (f.publishAt !== toLocalInput(post.scheduledAt)) patch.scheduledAt = fromLocalInput(f.publishAt);
  return { patch, ...(f.body !== post.body ? { body: f.body } : {}) };
}

const providerOf = (platform: Platform) => (platform === 'X' ? 'x' : 'linkedin');

/**
 * The post editor, beside the calendar: the text with its length as the platform counts it, the
 * previews, images, account and time; then what the post's status allows (save, approve — with the
 * edited text —, schedule, publish now, delete). A new post is saved as a draft first.
 */
export function PostEditor({
  orgId,
  postId,
  canWrite,
  onClose,
  onCreated,
}: {
  orgId: string;
  postId: string | null;
  canWrite: boolean;
  onClose: () => void;
  onCreated: (id: string) => void;
}) {
  const post = useQuery({ ...postQuery(orgId, postId ?? ''), enabled: postId !== null });
  const title = postId === null ? 'New post' : post.data ? `${PLATFORM_LABELS[post.data.platform]} post` : 'Post';
  return (
    <Sheet title={title} onClose={onClose}>
      {postId === null ? (
        <EditorForm orgId={orgId} post={null} canWrite={canWrite} onCreated={onCreated} onDeleted={onClose} />
      ) : (
        <QueryState query={post} loading="Loading the post…" retry>
          {(data) => <EditorForm key={data.id} orgId={orgId} post={data} canWrite={canWrite} onCreated={onCreated} onDeleted={onClose} />}
        </QueryState>
      )}
    </Sheet>
  );
}

function Sheet({ title, onClose, children }: { title: string; onClose: () => void; children: ReactNode }) {
  return (
    <Dialog.Root open onOpenChange={(open) => !open && onClose()}>
      <Dialog.Portal>
        <Dialog.Overlay className="fixed inset-0 z-40 bg-slate-900/20" />
        <Dialog.Content className="fixed inset-y-0 right-0 z-50 w-full max-w-5xl overflow-y-auto bg-white p-6 shadow-xl">
          <Dialog.Title className="pr-8 text-lg font-semibold text-slate-900">{title}</Dialog.Title>
          <Dialog.Description className="sr-only">Write, preview, approve and schedule the post.</Dialog.Description>
          <div className="mt-4">{children}</div>
          <Dialog.Close className="absolute top-4 right-4 rounded p-1 text-slate-500 hover:bg-slate-100" aria-label="Close">
            ✕
          </Dialog.Close>
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}

function EditorForm({
  orgId,
  post,
  canWrite,
  onCreated,
  onDeleted,
}: {
  orgId: string;
  post: Post | null;
  canWrite: boolean;
  onCreated: (id: string) => void;
  onDeleted: () => void;
}) {
  const queryClient = useQueryClient();
  const cache = postCache(queryClient, orgId);
  const [f, setF] = useState<Fields>(post ? fieldsOf(post) : EMPTY);
  const [notice, setNotice] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const set = (next: Partial<Fields>) => {
    setNotice(null);
    setF((prev) => ({ ...prev, ...next }));
  };
  const projects = useQuery(projectsQuery(orgId));
  const integrations = useQuery(allIntegrationsQuery(orgId));
  const media = useMediaItems(orgId, f.mediaIds);

  const editable = canWrite && (post === null || allowed('edit', post.status));
  const hashtags = parseHashtags(f.hashtags);
  const count = countPost(f.platform, f.body, hashtags);
  const timeZone = browserTimeZone();
  const publishAt = fromLocalInput(f.publishAt);
  const future = isFuture(publishAt);
  const diff = post ? changes(post, f) : null;
  const dirty = post === null ? f.body.trim() !== '' : Object.keys(diff!.patch).length > 0 || diff!.body !== undefined;
  const invalid = count.over > 0 || f.body.trim() === '' || f.mediaIds.length > MAX_MEDIA[f.platform];

  const projectOf = f.projectId || post?.projectId || '';
  const accounts = (integrations.data?.items ?? []).filter(
    (i) => i.provider === providerOf(f.platform) && (i.projectId === null || !projectOf || i.projectId === projectOf),
  );
  const account = integrations.data?.items.find((i) => i.id === f.integrationId);

  /** After a change: the form shows the stored post, and the calendar and lists refresh. */
  const refresh = async (changed?: Post, message?: string) => {
    if (changed) {
      cache.saved(changed);
      setF(fieldsOf(changed));
    }
    if (message) setNotice(message);
    await cache.stale();
  };
  // One error at a time: the last action's.
  const track = {
    onMutate: () => {
      setError(null);
      setNotice(null);
    },
    onError: (e: unknown) => {
      setError(e);
      void refresh();
    },
  };

  const create = useMutation({
    mutationFn: () =>
      createPost(orgId, {
        platform: f.platform,
        body: f.body,
        hashtags,
        mediaIds: f.mediaIds,
        ...(f.projectId ? { projectId: f.projectId } : {}),
        ...(f.integrationId ? { integrationId: f.integrationId } : {}),
        ...(publishAt ? { scheduledAt: publishAt } : {}),
      }),
    ...track,
    onSuccess: async (created) => {
      await refresh(created, 'Draft saved.');
      onCreated(created.id);
    },
  });
  const patch = (body: Record<string, unknown>) => patchPost(orgId, post!.id, body);
  const save = useMutation({
    mutationFn: () => patch({ ...diff!.patch, ...(diff!.body !== undefined ? { body: diff!.body } : {}) }),
    ...track,
    onSuccess: async (saved) => {
      await refresh(saved, 'Saved.');
    },
  });
  // Approval carries the edited text itself (post.approved with editedBody); other changes are saved first.
  const approve = useMutation({
    mutationFn: async () => {
      if (Object.keys(diff!.patch).length) await patch(diff!.patch);
      return approvePost(orgId, post!.id, diff!.body !== undefined ? { body: diff!.body } : {});
    },
    ...track,
    onSuccess: async (approved) => {
      await refresh(
        approved,
        approved.status === 'SCHEDULED'
          ? `Approved and scheduled for ${formatDateTime(approved.scheduledAt)}.`
          : approved.status === 'PUBLISHING'
            ? 'Approved: publishing now.'
            : 'Approved.',
      );
    },
  });
  const publish = useMutation({
    mutationFn: () => publishPost(orgId, post!.id),
    ...track,
    onSuccess: async (published) => {
      await refresh(published, 'Publishing now.');
    },
  });
  const remove = useMutation({
    mutationFn: () => deletePost(orgId, post!.id),
    ...track,
    onSuccess: async () => {
      cache.removed(post!.id);
      await refresh();
      onDeleted();
    },
  });
  const [confirmDelete, setConfirmDelete] = useState(false);
  const busy = create.isPending || save.isPending || approve.isPending || publish.isPending || remove.isPending;
  const fieldErrors = error instanceof ApiError ? error.fieldErrors : {};

  return (
    <div className="grid gap-6 lg:grid-cols-[minmax(0,1fr)_minmax(0,26rem)]">
      <form
        className="space-y-4"
        onSubmit={(e) => {
          e.preventDefault();
          if (post === null) create.mutate();
          else save.mutate();
        }}
      >
        {post ? <PostStatus post={post} account={account} orgId={orgId} /> : null}
        <div className="grid gap-3 sm:grid-cols-2">
          <SelectField
            label="Platform"
            value={f.platform}
            disabled={!editable}
            options={PLATFORMS.map((p) => ({ value: p, label: PLATFORM_LABELS[p] }))}
            onChange={(e) => set({ platform: e.target.value as Platform, integrationId: '' })}
          />
          {(projects.data?.length ?? 0) > 1 ? (
            <SelectField
              label="Project"
              value={projectOf}
              disabled={!editable}
              options={[...(post ? [] : [{ value: '', label: 'Default project' }]), ...(projects.data ?? []).map((p) => ({ value: p.id, label: p.name }))]}
              onChange={(e) => set({ projectId: e.target.value, integrationId: '' })}
            />
          ) : null}
        </div>
        <div className="space-y-1">
          <label htmlFor="post-text" className="block text-sm font-medium text-slate-700">
            Text
          </label>
          <textarea
            id="post-text"
            rows={8}
            value={f.body}
            disabled={!editable}
            maxLength={10_000}
            aria-invalid={count.over > 0 || Boolean(fieldErrors.body) || undefined}
            aria-describedby="post-length"
            onChange={(e) => set({ body: e.target.value })}
            className="block w-full rounded-md border-0 px-3 py-2 text-sm text-slate-900 ring-1 ring-slate-300 ring-inset placeholder:text-slate-400 focus:ring-2 focus:ring-indigo-600 disabled:bg-slate-100 aria-[invalid=true]:ring-red-500"
            placeholder="What do you want to say?"
          />
          {fieldErrors.body ? <p className="text-xs text-red-600">{fieldErrors.body}</p> : null}
          <LengthCounter id="post-length" count={count} />
          {count.over ? (
            <p role="alert" className="text-xs text-red-700">
              {PLATFORM_LABELS[f.platform]} allows {count.max.toLocaleString()}; this post is {count.length.toLocaleString()} as {PLATFORM_LABELS[f.platform]}{' '}
              counts it. Shorten it to save or approve.
            </p>
          ) : null}
        </div>
        <TextField
          label="Hashtags"
          value={f.hashtags}
          disabled={!editable}
          error={fieldErrors.hashtags}
          placeholder="#launch #spring"
          hint="Separated by spaces; those not already in the text are added at its end."
          onChange={(e) => set({ hashtags: e.target.value })}
        />
        <MediaPicker
          orgId={orgId}
          projectId={projectOf || undefined}
          mediaIds={f.mediaIds}
          max={MAX_MEDIA[f.platform]}
          disabled={!editable}
          onChange={(mediaIds) => set({ mediaIds })}
        />
        <div className="grid gap-3 sm:grid-cols-2">
          <div className="space-y-1">
            <SelectField
              label="Account"
              value={f.integrationId}
              disabled={!editable}
              options={[
                { value: '', label: 'None yet' },
                ...accounts.map((i) => ({ value: i.id, label: `${i.name}${i.status === 'error' ? ' (needs reconnecting)' : ''}` })),
              ]}
              onChange={(e) => set({ integrationId: e.target.value })}
            />
            {accounts.length === 0 && integrations.isSuccess ? (
              <p className="text-xs text-slate-500">
                No {PLATFORM_LABELS[f.platform]} account connected.{' '}
                <Link to="/orgs/$orgId/settings/integrations" params={{ orgId }} className="text-indigo-600 underline">
                  Connect one
                </Link>
              </p>
            ) : null}
          </div>
          <TextField
            label="Publish at"
            type="datetime-local"
            value={f.publishAt}
            disabled={!editable}
            error={fieldErrors.scheduledAt}
            hint={`Your time zone: ${timeZone} (${offsetName(timeZone)}). Empty: published when approved.`}
            onChange={(e) => set({ publishAt: e.target.value })}
          />
        </div>

        <FormError error={error} />
        {notice ? (
          <p role="status" className="text-sm text-emerald-700">
            {notice}
          </p>
        ) : null}
        {canWrite ? (
          <div className="flex flex-wrap items-center justify-end gap-2 border-t border-slate-100 pt-4">
            {post && allowed('delete', post.status) ? (
              confirmDelete ? (
                <span className="mr-auto flex items-center gap-2 text-sm">
                  Delete this post?
                  <Button size="sm" variant="danger" disabled={busy} onClick={() => remove.mutate()}>
                    Delete post
                  </Button>
                  <Button size="sm" onClick={() => setConfirmDelete(false)}>
                    Keep it
                  </Button>
                </span>
              ) : (
                <Button variant="ghost" className="mr-auto text-red-700" onClick={() => setConfirmDelete(true)}>
                  Delete
                </Button>
              )
            ) : null}
            {post && allowed('publish', post.status) && !dirty ? (
              <Button disabled={busy} onClick={() => publish.mutate()}>
                Publish now
              </Button>
            ) : null}
            {editable ? (
              <Button type="submit" disabled={busy || !dirty || invalid}>
                {post === null ? 'Save draft' : 'Save changes'}
              </Button>
            ) : null}
            {post && allowed('approve', post.status) ? (
              <Button variant="primary" disabled={busy || invalid} onClick={() => approve.mutate()}>
                {future ? 'Approve and schedule' : f.integrationId ? 'Approve and publish' : 'Approve'}
              </Button>
            ) : null}
          </div>
        ) : null}
      </form>
      <aside aria-label="Preview" className="space-y-2">
        <h3 className="text-sm font-semibold text-slate-900">Preview</h3>
        <PlatformPreviews platform={f.platform} body={f.body} hashtags={hashtags} media={media} author={account?.name ?? ''} />
      </aside>
    </div>
  );
}

/** Where the post stands: status, when, who approved it, the published link, or why publishing failed. */
function PostStatus({ post, account, orgId }: { post: Post; account: Integration | undefined; orgId: string }) {
  const when =
    post.status === 'PUBLISHED'
      ? `Published ${formatDateTime(post.publishedAt)}`
      : post.status === 'SCHEDULED'
        ? `Scheduled for ${formatDateTime(post.scheduledAt)}`
        : post.status === 'PUBLISHING'
          ? 'Publishing now…'
          : post.status === 'APPROVED'
            ? post.integrationId
              ? 'Approved'
              : 'Approved: choose an account and publish it'
            : post.status === 'FAILED'
              ? `Failed ${formatDateTime(post.failedAt)}`
              : post.scheduledAt
                ? `Draft for ${formatDateTime(post.scheduledAt)}`
                : 'Draft';
  return (
    <div className="space-y-2">
      <p className="flex flex-wrap items-center gap-2 text-sm text-slate-700">
        <Badge>{post.status}</Badge>
        <span>{when}</span>
        {post.approvedAt ? <span className="text-slate-500">· approved {relative(post.approvedAt)}</span> : null}
        {post.url ? (
          <a href={post.url} target="_blank" rel="noreferrer" className="text-indigo-600 underline">
            View on {PLATFORM_LABELS[post.platform]}
          </a>
        ) : null}
      </p>
      {post.error ? (
        <div role="alert" className="rounded-md border border-red-200 bg-red-50 p-3 text-sm text-red-800">
          <p className="font-semibold">
            {post.status === 'FAILED' ? 'Publishing failed' : 'The last attempt failed'}: {post.error.message}
          </p>
          <p className="mt-1 text-xs">
            {post.error.code} · {post.attempts} attempt{post.attempts === 1 ? '' : 's'}
            {post.status === 'PUBLISHING' && post.nextAttemptAt ? ` · next attempt ${relative(post.nextAttemptAt)}` : ''}
            {post.status === 'FAILED' ? ' · edit it or approve it again to retry' : ''}
          </p>
        </div>
      ) : null}
      {account?.status === 'error' ? (
        <p role="alert" className="rounded-md bg-amber-50 p-3 text-sm text-amber-900">
          The account “{account.name}” needs reconnecting{account.lastError ? ` (${account.lastError.message})` : ''}.{' '}
          <Link to="/orgs/$orgId/settings/integrations" params={{ orgId }} className="font-medium underline">
            Go to integrations
          </Link>
        </p>
      ) : null}
    </div>
  );
}
