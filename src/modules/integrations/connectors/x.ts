import type { Connector, ConnectorContext, PublishOutcome, PublishRequest } from './types.ts';
import { failureOf, formData, json, send } from './http.ts';

function tweetBody(request: PublishRequest, mediaIds: string[]): Record<string, unknown> {
  const body: Record<string, unknown> = { text: request.text };
  if (mediaIds.length) body.media = { media_ids: mediaIds };
  return body;
}

/** X API v2 media upload (one request for an image): answers { data: { id } }. */
async function uploadImage(
  ctx: ConnectorContext,
  token: string,
  media: PublishRequest['media'][number],
): Promise<{ ok: true; id: string } | Extract<PublishOutcome, { ok: false }>> {
  const form = formData(
    { media_category: 'tweet_image', media_type: media.contentType },
    { name: 'media', filename: media.id, contentType: media.contentType, bytes: await media.read() },
  );
  const result = await send(ctx, 'X', {
    method: 'POST',
    url: `${ctx.baseUrl}/2/media/upload`,
    headers: { authorization: `Bearer ${token}`, 'content-type': form.contentType },
    body: form.body,
  });
  if (!result.ok) return result;
  if (result.res.status < 200 || result.res.status >= 300) return failureOf('X', result.res);
  const id = (json(result.res) as { data?: { id?: unknown } } | undefined)?.data?.id;
  if (typeof id !== 'string' || !id) return { ok: false, code: 'UPSTREAM_INVALID', message: 'X gave no media id for the image', retryable: false };
  return { ok: true, id };
}

export const x: Connector = {
  provider: 'x',
  platform: 'X',

  checkCredentials(c) {
    if (typeof c.accessToken !== 'string' || c.accessToken.length < 1)
      return 'credentials.accessToken (an OAuth 2.0 user access token with tweet.write) is required';
    return null;
  },

  preview(ctx, _creds, request) {
    return {
      method: 'POST',
      url: `${ctx.baseUrl}/2/tweets`,
      body: tweetBody(
        request,
        request.media.map((m) => `<media id for ${m.id}>`),
      ),
      mediaUploads: request.media.length,
    };
  },

  async publish(ctx, creds, request) {
    const mediaIds: string[] = [];
    for (const item of request.media) {
      const uploaded = await uploadImage(ctx, creds.accessToken!, item);
      if (!uploaded.ok) return uploaded;
      mediaIds.push(uploaded.id);
    }
    const result = await send(ctx, 'X', {
      method: 'POST',
      url: `${ctx.baseUrl}/2/tweets`,
      headers: { authorization: `Bearer ${creds.accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(tweetBody(request, mediaIds)),
    });
    if (!result.ok) return result;
    const { res } = result;
    if (res.status < 200 || res.status >= 300) return failureOf('X', res);
    const id = (json(res) as { data?: { id?: unknown } } | undefined)?.data?.id;
    if (typeof id !== 'string' || !/^\d{1,30}$/.test(id)) {
      return {
        ok: false,
        code: 'NO_EXTERNAL_ID',
        message: `X answered HTTP ${res.status} without a post id; check the account before retrying`,
        retryable: false,
      };
    }
    return { ok: true, externalId: id, url: `https://x.com/i/web/status/${id}` };
  },
};
