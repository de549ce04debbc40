/**
 * Posts (the calendar and the lists), media, and connected accounts: keys, queries and changes.
 * `postKeys.all(orgId)` is what a change of a post and the stream's post events make stale;
 * `integrationKeys.all(orgId)` the same for connections (the analytics' Google sources included).
 */
import { queryOptions, useMutation, useQueryClient, type QueryClient } from '@tanstack/react-query';
import { api, unwrap, type BodyOf, type QueryOf, type Schemas } from '../api/client';

type Post = Schemas['Post'];
type Integration = Schemas['Integration'];
export type PostListQuery = QueryOf<'/api/v1/orgs/{orgId}/content'>;
export type CalendarQuery = QueryOf<'/api/v1/orgs/{orgId}/content/calendar'>;
export type IntegrationListQuery = QueryOf<'/api/v1/orgs/{orgId}/integrations'>;

export const postKeys = {
  all: (orgId: string) => [orgId, 'posts'] as const,
  list: (orgId: string, query: PostListQuery) => [...postKeys.all(orgId), 'list', query] as const,
  calendar: (orgId: string, range: { from: string; to: string; timeZone: string; platform?: string }) => [...postKeys.all(orgId), 'calendar', range] as const,
  planned: (orgId: string, filter: { platform?: string }) => [...postKeys.all(orgId), 'planned', filter] as const,
  detail: (orgId: string, id: string) => [...postKeys.all(orgId), 'one', id] as const,
};

export const mediaKeys = {
  detail: (orgId: string, id: string) => [orgId, 'media', id] as const,
};

export const integrationKeys = {
  all: (orgId: string) => [orgId, 'integrations'] as const,
  every: (orgId: string) => [...integrationKeys.all(orgId), 'all'] as const,
  list: (orgId: string, query: IntegrationListQuery) => [...integrationKeys.all(orgId), 'list', query] as const,
  detail: (orgId: string, id: string | undefined) => [...integrationKeys.all(orgId), 'one', id] as const,
  syncRuns: (orgId: string, id: string | undefined) => [...integrationKeys.all(orgId), id, 'sync-runs'] as const,
  latestSyncRun: (orgId: string, id: string | undefined) => [...integrationKeys.syncRuns(orgId, id), 'latest'] as const,
  /** Not under `all`: an integration event must not make the panel ask Google for the list again. */
  googleAccounts: (orgId: string, id: string) => [orgId, 'google-accounts', id] as const,
};

// ——— Posts ———

export const postsQuery = (orgId: string, query: PostListQuery) =>
  queryOptions({
    queryKey: postKeys.list(orgId, query),
    queryFn: () => listPosts(orgId, query),
  });
const listPosts = (orgId: string, query: PostListQuery) => unwrap(api.GET('/api/v1/orgs/{orgId}/content', { params: { path: { orgId }, query } }));

/** The calendar endpoint lists what is scheduled or done, by day in the browser's time zone. */
export const calendarQuery = (orgId: string, range: { from: string; to: string; timeZone: string; platform?: CalendarQuery['platform'] }) =>
  queryOptions({
    queryKey: postKeys.calendar(orgId, range),
    queryFn: () =>
      unwrap(
        api.GET('/api/v1/orgs/{orgId}/content/calendar', {
          params: { path: { orgId }, query: { from: range.from, to: range.to, timezone: range.timeZone, platform: range.platform } },
        }),
      ),
  });

/** Drafts and approved posts (the first 100 by time), which the calendar endpoint leaves out. */
export const plannedPostsQuery = (orgId: string, platform: PostListQuery['platform']) =>
  queryOptions({
    queryKey: postKeys.planned(orgId, { platform }),
    queryFn: () => listPosts(orgId, { status: 'DRAFT,APPROVED', platform, sort: 'scheduledAt', pageSize: 100 }),
  });

export const postQuery = (orgId: string, postId: string) =>
  queryOptions({
    queryKey: postKeys.detail(orgId, postId),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/content/{postId}', { params: { path: { orgId, postId } } })),
  });

export const createPost = (orgId: string, body: BodyOf<'/api/v1/orgs/{orgId}/content', 'post'>) =>
  unwrap(api.POST('/api/v1/orgs/{orgId}/content', { params: { path: { orgId } }, body }));
export const patchPost = (orgId: string, postId: string, body: Record<string, unknown>) =>
  unwrap(api.PATCH('/api/v1/orgs/{orgId}/content/{postId}', { params: { path: { orgId, postId } }, body: body as never }));
export const approvePost = (orgId: string, postId: string, body: { body?: string }) =>
  unwrap(api.POST('/api/v1/orgs/{orgId}/content/{postId}/approve', { params: { path: { orgId, postId } }, body }));
export const publishPost = (orgId: string, postId: string) =>
  unwrap(api.POST('/api/v1/orgs/{orgId}/content/{postId}/publish', { params: { path: { orgId, postId } } }));
export const deletePost = (orgId: string, postId: string) =>
  unwrap(api.DELETE('/api/v1/orgs/{orgId}/content/{postId}', { params: { path: { orgId, postId } } }));

/** What the post editor does to the cache after a change: the post's entry, or its removal; every post query stale. */
export const postCache = (queryClient: QueryClient, orgId: string) => ({
  saved: (post: Post) => queryClient.setQueryData(postKeys.detail(orgId, post.id), post),
  removed: (postId: string) => queryClient.removeQueries({ queryKey: postKeys.detail(orgId, postId) }),
  stale: () => queryClient.invalidateQueries({ queryKey: postKeys.all(orgId) }),
});

const generate = (orgId: string, body: BodyOf<'/api/v1/orgs/{orgId}/content/generate', 'post'>) =>
  unwrap(api.POST('/api/v1/orgs/{orgId}/content/generate', { params: { path: { orgId } }, body }));

/** Drafts written by AI; `onDone` runs with them first, then the posts are stale. */
export function useGeneratePosts(orgId: string, onDone: (result: Awaited<ReturnType<typeof generate>>) => void) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: BodyOf<'/api/v1/orgs/{orgId}/content/generate', 'post'>) => generate(orgId, body),
    onSuccess: async (result) => {
      onDone(result);
      await queryClient.invalidateQueries({ queryKey: postKeys.all(orgId) });
    },
  });
}

// ——— Media ———

export const mediaQuery = (orgId: string, mediaId: string) =>
  queryOptions({
    queryKey: mediaKeys.detail(orgId, mediaId),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/media/{mediaId}', { params: { path: { orgId, mediaId } } })),
    staleTime: Infinity,
  });

/** Uploads one image or video (multipart: the `projectId` field first, then the `file` part). */
export function uploadMedia(orgId: string, file: File, projectId?: string) {
  const form = new FormData();
  if (projectId) form.append('projectId', projectId);
  form.append('file', file, file.name);
  return unwrap(
    api.POST('/api/v1/orgs/{orgId}/media/upload', {
      params: { path: { orgId } },
      body: form as unknown as { file: string },
      bodySerializer: (body) => body as unknown as FormData,
    }),
  );
}

// ——— Connected accounts ———

/** Every connected account (a handful per organization: the first 100 are all of them in practice). */
export const allIntegrationsQuery = (orgId: string) =>
  queryOptions({
    queryKey: integrationKeys.every(orgId),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/integrations', { params: { path: { orgId }, query: { pageSize: 100 } } })),
  });

export const integrationsQuery = (orgId: string, query: IntegrationListQuery) =>
  queryOptions({
    queryKey: integrationKeys.list(orgId, query),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/integrations', { params: { path: { orgId }, query } })),
  });

/** The organization's Google connections (the analytics sources), at most 100. */
export const googleIntegrationsQuery = (orgId: string) => integrationsQuery(orgId, { provider: 'google', pageSize: 100 });

export const integrationQuery = (orgId: string, id: string | undefined) =>
  queryOptions({
    queryKey: integrationKeys.detail(orgId, id),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/integrations/{id}', { params: { path: { orgId, id: id! } } })),
  });

export const syncRunsQuery = (orgId: string, id: string, pageSize: number) =>
  queryOptions({
    queryKey: integrationKeys.syncRuns(orgId, id),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/integrations/{id}/sync-runs', { params: { path: { orgId, id }, query: { pageSize } } })),
  });

export const latestSyncRunQuery = (orgId: string, id: string | undefined) =>
  queryOptions({
    queryKey: integrationKeys.latestSyncRun(orgId, id),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/integrations/{id}/sync-runs', { params: { path: { orgId, id: id! }, query: { pageSize: 1 } } })),
  });

export const googleAccountsQuery = (orgId: string, id: string) =>
  queryOptions({
    queryKey: integrationKeys.googleAccounts(orgId, id),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/integrations/{id}/accounts', { params: { path: { orgId, id } } })),
    staleTime: 60_000,
  });

export const connectIntegration = (orgId: string, body: BodyOf<'/api/v1/orgs/{orgId}/integrations', 'post'>) =>
  unwrap(api.POST('/api/v1/orgs/{orgId}/integrations', { params: { path: { orgId } }, body }));
export const deleteIntegration = (orgId: string, id: string) =>
  unwrap(api.DELETE('/api/v1/orgs/{orgId}/integrations/{id}', { params: { path: { orgId, id } } }));

/** Connects an account by a token the user already has: the connections are stale. */
export function useConnectIntegration(orgId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: BodyOf<'/api/v1/orgs/{orgId}/integrations', 'post'>) => connectIntegration(orgId, body),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: integrationKeys.all(orgId) }),
  });
}

/** Changes a connection's config (a Google connection's sources); `onDone` runs first. */
export function useUpdateIntegration(orgId: string, id: string, onDone: () => void) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (config: NonNullable<BodyOf<'/api/v1/orgs/{orgId}/integrations/{id}', 'patch'>['config']>) =>
      unwrap(api.PATCH('/api/v1/orgs/{orgId}/integrations/{id}', { params: { path: { orgId, id } }, body: { config } })),
    onSuccess: async () => {
      onDone();
      await queryClient.invalidateQueries({ queryKey: integrationKeys.all(orgId) });
    },
  });
}

export function useDeleteIntegration(orgId: string, id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => deleteIntegration(orgId, id),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: integrationKeys.all(orgId) }),
  });
}

/** Starts a sync of a Google connection: its sync runs (the analytics page's latest one too) are stale. */
export function useStartSync(orgId: string, id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: BodyOf<'/api/v1/orgs/{orgId}/integrations/{id}/sync', 'post'>) =>
      unwrap(api.POST('/api/v1/orgs/{orgId}/integrations/{id}/sync', { params: { path: { orgId, id } }, body })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: integrationKeys.syncRuns(orgId, id) }),
  });
}

/** The provider's authorization URL for an OAuth connection (a new one, or `integrationId` reconnected). */
export const startOAuth = (
  orgId: string,
  provider: 'linkedin' | 'x' | 'google',
  body: BodyOf<'/api/v1/orgs/{orgId}/integrations/oauth/{provider}/start', 'post'>,
) => unwrap(api.POST('/api/v1/orgs/{orgId}/integrations/oauth/{provider}/start', { params: { path: { orgId, provider } }, body }));

/** Posts that still publish through an account: the ones not yet published. */
const WAITING = 'DRAFT,APPROVED,SCHEDULED,FAILED';

/**
 * Reconnects an account connected by a pasted token with a new token (an OAuth connection
 * reconnects through its provider instead, keeping its id). The API has no call that replaces a
 * pasted token in place, so the panel connects the account
 * again under the same name and project, moves the posts waiting on the old connection to the new
 * one, and then removes the old connection. A step that fails stops there and says what was done.
 */
export async function reconnect(orgId: string, old: Integration, credentials: Record<string, string>): Promise<{ integration: Integration; moved: number }> {
  const provider = old.provider;
  if (provider === 'google') throw new Error('A Google account reconnects through Google: use Reconnect on the integrations page.');
  const integration = await connectIntegration(orgId, { provider, name: old.name, projectId: old.projectId, credentials });
  let moved = 0;
  try {
    const waiting: string[] = [];
    for (let page = 1; ; page++) {
      const list = await listPosts(orgId, { status: WAITING, pageSize: 100, page, sort: 'createdAt' });
      waiting.push(...list.items.filter((p) => p.integrationId === old.id).map((p) => p.id));
      if (page * list.pageSize >= list.total || list.items.length === 0) break;
    }
    for (const postId of waiting) {
      await patchPost(orgId, postId, { integrationId: integration.id });
      moved++;
    }
    await deleteIntegration(orgId, old.id);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(
      `The account is connected again as a new connection, but the old one was kept: ${moved} post${moved === 1 ? '' : 's'} moved before this failed: ${message}`,
      { cause: error },
    );
  }
  return { integration, moved };
}

/** After a reconnection (done or stopped half-way): the connections and the posts are stale. */
export const reconnected = async (queryClient: QueryClient, orgId: string) => {
  await queryClient.invalidateQueries({ queryKey: integrationKeys.all(orgId) });
  await queryClient.invalidateQueries({ queryKey: postKeys.all(orgId) });
};
