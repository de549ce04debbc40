import type { Connector, ConnectorContext, PublishOutcome, PublishRequest } from './types.ts';
import { failureOf, header, json, send } from './http.ts';

/** The Posts API version this connector speaks (LinkedIn-Version header, YYYYMM). */
export const LINKEDIN_VERSION = '202505';
const AUTHOR = /^urn:li:(person|organization):[A-Za-z0-9_-]{1,100}$/;

/**
 * LinkedIn "little text" commentary: reserved characters are escaped, hashtags use the hashtag
 * template so they render as links.
 */
export function commentary(body: string, hashtags: string[]): string {
  const escaped = body.replace(/[\\|{}@[\]()<>#*_~]/g, (c) => '\\' + c);
  const tags = hashtags.map((h) => `{hashtag|\\#|${h.replace(/^#/, '')}}`);
  return tags.length ? `${escaped}\n\n${tags.join(' ')}` : escaped;
}

function postBody(author: string, request: PublishRequest, images: string[]): Record<string, unknown> {
  const body: Record<string, unknown> = {
    author,
    commentary: commentary(request.body, request.hashtags),
    visibility: 'PUBLIC',
    distribution: { feedDistribution: 'MAIN_FEED', targetEntities: [], thirdPartyDistributionChannels: [] },
    lifecycleState: 'PUBLISHED',
    isReshareDisabledByAuthor: false,
  };
  if (images.length === 1) body.content = { media: { id: images[0] } };
  else if (images.length > 1) body.content = { multiImage: { images: images.map((id) => ({ id })) } };
  return body;
}

function headers(token: string): Record<string, string> {
  return {
    authorization: `Bearer ${token}`,
    'linkedin-version': LINKEDIN_VERSION,
    'x-restli-protocol-version': '2.0.0',
    'content-type': 'application/json',
  };
}

/** Images API: initializeUpload gives an upload URL and the image URN; the bytes are PUT there. */
async function uploadImage(
  ctx: ConnectorContext,
  creds: Record<string, string>,
  bytes: Buffer,
): Promise<{ ok: true; urn: string } | Extract<PublishOutcome, { ok: false }>> {
  const init = await send(ctx, 'LinkedIn', {
    method: 'POST',
    url: `${ctx.baseUrl}/rest/images?action=initializeUpload`,
    headers: headers(creds.accessToken!),
    body: JSON.stringify({ initializeUploadRequest: { owner: creds.author } }),
  });
  if (!init.ok) return init;
  if (init.res.status < 200 || init.res.status >= 300) return failureOf('LinkedIn', init.res);
  const value = (json(init.res) as { value?: { uploadUrl?: unknown; image?: unknown } } | undefined)?.value;
  if (typeof value?.uploadUrl !== 'string' || typeof value.image !== 'string') {
    return { ok: false, code: 'UPSTREAM_INVALID', message: 'LinkedIn gave no upload URL for the image', retryable: false };
  }
  const put = await send(ctx, 'LinkedIn', {
    method: 'PUT',
    url: value.uploadUrl,
    headers: { authorization: `Bearer ${creds.accessToken}`, 'content-type': 'application/octet-stream' },
    body: bytes,
  });
  if (!put.ok) return put;
  if (put.res.status < 200 || put.res.status >= 300) return failureOf('LinkedIn', put.res);
  return { ok: true, urn: value.image };
}

export const linkedin: Connector = {
  provider: 'linkedin',
  platform: 'LINKEDIN',

  checkCredentials(c) {
    if (typeof c.accessToken !== 'string' || c.accessToken.length < 1)
      return 'credentials.accessToken (an OAuth 2.0 access token with w_member_social or w_organization_social) is required';
    if (typeof c.author !== 'string' || !AUTHOR.test(c.author))
      return 'credentials.author must be a member or organization URN, e.g. urn:li:person:abc123 or urn:li:organization:123';
    return null;
  },

  preview(ctx, creds, request) {
    return {
      method: 'POST',
      url: `${ctx.baseUrl}/rest/posts`,
      body: postBody(
        creds.author!,
        request,
        request.media.map((m) => `<image for ${m.id}>`),
      ),
      mediaUploads: request.media.length,
    };
  },

  async publish(ctx, creds, request) {
    const images: string[] = [];
    for (const item of request.media) {
      const uploaded = await uploadImage(ctx, creds, await item.read());
      if (!uploaded.ok) return uploaded;
      images.push(uploaded.urn);
    }
    const result = await send(ctx, 'LinkedIn', {
      method: 'POST',
      url: `${ctx.baseUrl}/rest/posts`,
      headers: headers(creds.accessToken!),
      body: JSON.stringify(postBody(creds.author!, request, images)),
    });
    if (!result.ok) return result;
    const { res } = result;
    if (res.status < 200 || res.status >= 300) return failureOf('LinkedIn', res);
    // The new post's URN comes back in a header; without it the post is not known to exist.
    const urn = header(res, 'x-restli-id') ?? header(res, 'x-linkedin-id');
    if (!urn)
      return {
        ok: false,
        code: 'NO_EXTERNAL_ID',
        message: `LinkedIn answered HTTP ${res.status} without the post id (x-restli-id); check the account before retrying`,
        retryable: false,
      };
    return { ok: true, externalId: urn, url: `https://www.linkedin.com/feed/update/${urn}` };
  },
};
