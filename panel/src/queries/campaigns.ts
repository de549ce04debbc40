/**
 * Campaigns and suppressions: keys (a campaign's recipients under its area, so a change of the
 * campaign reaches them), queries and changes.
 */
import { queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import { api, unwrap, type BodyOf, type QueryOf } from '../api/client';
import { CAMPAIGN_CHANNELS, type Campaign } from '../components/campaigns/model';
import { inboxesQuery } from './conversations';

export type CampaignListQuery = QueryOf<'/api/v1/orgs/{orgId}/campaigns'>;
export type RecipientListQuery = QueryOf<'/api/v1/orgs/{orgId}/campaigns/{id}/recipients'>;
export type SuppressionListQuery = QueryOf<'/api/v1/orgs/{orgId}/suppressions'>;
export type CampaignAction = 'start' | 'pause' | 'resume' | 'cancel';

export const campaignKeys = {
  all: (orgId: string) => [orgId, 'campaigns'] as const,
  lists: (orgId: string) => [...campaignKeys.all(orgId), 'list'] as const,
  list: (orgId: string, query: CampaignListQuery) => [...campaignKeys.lists(orgId), query] as const,
  detail: (orgId: string, id: string) => [...campaignKeys.all(orgId), 'one', id] as const,
  recipients: (orgId: string, id: string) => [...campaignKeys.all(orgId), 'recipients', id] as const,
  recipientList: (orgId: string, id: string, query: RecipientListQuery) => [...campaignKeys.recipients(orgId, id), query] as const,
};

export const suppressionKeys = {
  all: (orgId: string) => [orgId, 'suppressions'] as const,
  list: (orgId: string, query: SuppressionListQuery) => [...suppressionKeys.all(orgId), query] as const,
};

export const campaignsQuery = (orgId: string, query: CampaignListQuery) =>
  queryOptions({
    queryKey: campaignKeys.list(orgId, query),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/campaigns', { params: { path: { orgId }, query } })),
  });

export const campaignQuery = (orgId: string, id: string) =>
  queryOptions({
    queryKey: campaignKeys.detail(orgId, id),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/campaigns/{id}', { params: { path: { orgId, id } } })),
  });

export const recipientsQuery = (orgId: string, id: string, query: RecipientListQuery) =>
  queryOptions({
    queryKey: campaignKeys.recipientList(orgId, id, query),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/campaigns/{id}/recipients', { params: { path: { orgId, id }, query } })),
  });

export const suppressionsQuery = (orgId: string, query: SuppressionListQuery) =>
  queryOptions({
    queryKey: suppressionKeys.list(orgId, query),
    queryFn: () => unwrap(api.GET('/api/v1/orgs/{orgId}/suppressions', { params: { path: { orgId }, query } })),
  });

/** The inboxes a campaign can send through (email, WhatsApp, Telegram; at most 100 are listed). */
export const sendingInboxesQuery = (orgId: string) =>
  queryOptions({
    ...inboxesQuery(orgId),
    select: (data) => data.items.filter((inbox) => (CAMPAIGN_CHANNELS as readonly string[]).includes(inbox.channel)),
  });

/** A campaign as saved or changed: its entry set, the lists stale. */
function useCampaignSaved(orgId: string) {
  const queryClient = useQueryClient();
  return (campaign: Campaign) => {
    queryClient.setQueryData(campaignKeys.detail(orgId, campaign.id), campaign);
    return queryClient.invalidateQueries({ queryKey: campaignKeys.lists(orgId) });
  };
}

const createCampaign = (orgId: string, body: BodyOf<'/api/v1/orgs/{orgId}/campaigns', 'post'>) =>
  unwrap(api.POST('/api/v1/orgs/{orgId}/campaigns', { params: { path: { orgId } }, body }));

export function useCreateCampaign(orgId: string) {
  const saved = useCampaignSaved(orgId);
  return useMutation({
    mutationFn: (body: Parameters<typeof createCampaign>[1]) => createCampaign(orgId, body),
    onSuccess: saved,
  });
}
export function useUpdateCampaign(orgId: string, id: string) {
  const saved = useCampaignSaved(orgId);
  return useMutation({
    mutationFn: (body: BodyOf<'/api/v1/orgs/{orgId}/campaigns/{id}', 'patch'>) =>
      unwrap(api.PATCH('/api/v1/orgs/{orgId}/campaigns/{id}', { params: { path: { orgId, id } }, body })),
    onSuccess: saved,
  });
}

/** Start, pause, resume or cancel: the campaign's entry set, its recipients and the lists stale. */
export function useCampaignAction(orgId: string, id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (action: CampaignAction) => {
      const params = { path: { orgId, id } };
      // Start takes options (testMode), so its body is an object even when empty.
      return unwrap(
        action === 'start'
          ? api.POST('/api/v1/orgs/{orgId}/campaigns/{id}/start', { params, body: {} })
          : api.POST(`/api/v1/orgs/{orgId}/campaigns/{id}/${action}`, { params }),
      );
    },
    onSuccess: async (updated) => {
      queryClient.setQueryData(campaignKeys.detail(orgId, id), updated);
      await queryClient.invalidateQueries({ queryKey: campaignKeys.recipients(orgId, id) });
      await queryClient.invalidateQueries({ queryKey: campaignKeys.lists(orgId) });
    },
  });
}

/** Deletes a campaign; `onDone` runs before the lists are refetched (the dialog closes at once). */
export function useDeleteCampaign(orgId: string, id: string, onDone: () => void) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => unwrap(api.DELETE('/api/v1/orgs/{orgId}/campaigns/{id}', { params: { path: { orgId, id } } })),
    onSuccess: async () => {
      onDone();
      queryClient.removeQueries({ queryKey: campaignKeys.detail(orgId, id) });
      await queryClient.invalidateQueries({ queryKey: campaignKeys.lists(orgId) });
    },
  });
}

/** Sends the first step, rendered, to one address (not counted in the campaign). */
export const useTestSend = (orgId: string, id: string) =>
  useMutation({
    mutationFn: (to: string) => unwrap(api.POST('/api/v1/orgs/{orgId}/campaigns/{id}/test', { params: { path: { orgId, id } }, body: { to } })),
  });

/** Adding or removing a suppression makes the suppression lists stale; `onDone` runs first (the dialog closes). */
export function useAddSuppression(orgId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: { channel: string; address: string; reason: BodyOf<'/api/v1/orgs/{orgId}/suppressions', 'post'>['reason'] }) =>
      unwrap(api.POST('/api/v1/orgs/{orgId}/suppressions', { params: { path: { orgId } }, body })),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: suppressionKeys.all(orgId) }),
  });
}

export function useDeleteSuppression(orgId: string, onDone: () => void) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/api/v1/orgs/{orgId}/suppressions/{id}', { params: { path: { orgId, id } } })),
    onSuccess: async () => {
      onDone();
      await queryClient.invalidateQueries({ queryKey: suppressionKeys.all(orgId) });
    },
  });
}
