import { queryOptions } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';

export { projectsQuery } from '../../queries/settings';

/** Every connected account (a handful per organization: the first 100 are all of them in practice). */
export const allIntegrationsQuery = (orgId: string) => queryOptions({
  queryKey: [orgId, 'integrations', 'all'],
  queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/integrations', { params: { path: { orgId }, query: { pageSize: 100 } } })),
});

export const mediaQuery = (orgId: string, mediaId: string) => queryOptions({
  queryKey: [orgId, 'media', mediaId],
  queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/media/{mediaId}', { params: { path: { orgId, mediaId } } })),
  staleTime: Infinity,
});

export const postQuery = (orgId: string, postId: string) => queryOptions({
  queryKey: [orgId, 'posts', 'one', postId],
  queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/content/{postId}', { params: { path: { orgId, postId } } })),
});

/** Uploads one image or video (multipart: the `projectId` field first, then the `file` part). */
export function uploadMedia(orgId: string, file: File, projectId?: string) {
  const form = new FormData();
  if (projectId) form.append('projectId', projectId);
  form.append('file', file, file.name);
  return unwrap(api.POST('/api/v1/orgs/{orgId}/media/upload', {
    params: { path: { orgId } },
    body: form as unknown as { file: string },
    bodySerializer: (body) => body as unknown as FormData,
  }));
}
