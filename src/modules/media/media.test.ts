import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/harness.ts';
import { formData } from '../integrations/connectors/http.ts';

let t: TestApp;
let base: string;
const owner = () => ({ token: t.orgA.token });
// Above the 1 MB JSON body limit: uploads are streamed, only MEDIA_MAX_BYTES applies.
const LIMIT = 2 * 1024 * 1024;

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
// The start of an MP4: an ftyp box is what identifies it.
const MP4 = Buffer.concat([Buffer.from('000000206674797069736f6d0000020069736f6d69736f32617663316d703431', 'hex'), Buffer.alloc(64)]);

beforeAll(async () => {
  t = await buildTestApp({ env: { MEDIA_MAX_BYTES: String(LIMIT) } });
  base = `/api/v1/orgs/${t.orgA.orgId}`;
});
afterAll(async () => {
  await t.close();
});

function upload(
  bytes: Buffer,
  options: {
    filename?: string;
    contentType?: string;
    field?: string;
    auth?: { token?: string; apiKey?: string };
    orgBase?: string;
    fields?: Record<string, string>;
  } = {},
) {
  const form = formData(options.fields ?? {}, {
    name: options.field ?? 'file',
    filename: options.filename ?? 'file.bin',
    contentType: options.contentType ?? 'application/octet-stream',
    bytes,
  });
  return t.call({
    method: 'POST',
    url: `${options.orgBase ?? base}/media/upload`,
    auth: options.auth ?? owner(),
    headers: { 'content-type': form.contentType },
    payload: form.body,
  });
}

describe('media upload', () => {
  it('stores an image, sniffed from its bytes, and serves it back at the returned url', async () => {
    const res = await upload(PNG, { filename: 'pixel.jpg', contentType: 'image/jpeg' });
    expect(res.statusCode).toBe(201);
    const media = res.json();
    expect(media).toMatchObject({ contentType: 'image/png', size: PNG.length, filename: 'pixel.jpg' });
    expect(media.id).toMatch(/^med_/);
    const url = new URL(media.url);
    expect(url.pathname).toMatch(new RegExp(`^/api/v1/media/${media.id}/[\\w-]+\\.png$`));
    const served = await t.app.inject({ method: 'GET', url: url.pathname });
    expect(served.statusCode).toBe(200);
    expect(served.headers['content-type']).toBe('image/png');
    expect(served.headers['x-content-type-options']).toBe('nosniff');
    expect(served.rawPayload.equals(PNG)).toBe(true);
    const meta = await t.call({ method: 'GET', url: `${base}/media/${media.id}`, auth: owner() });
    expect(meta.json()).toMatchObject({ id: media.id, url: media.url });
  });

  it('accepts a file larger than the JSON body limit, up to MEDIA_MAX_BYTES', async () => {
    const res = await upload(Buffer.concat([PNG, Buffer.alloc(LIMIT - PNG.length)]), { filename: 'max.png' });
    expect(res.statusCode).toBe(201);
    expect(res.json().size).toBe(LIMIT);
  });

  it('accepts a video', async () => {
    const res = await upload(MP4, { filename: 'clip.mp4', contentType: 'video/mp4' });
    expect(res.statusCode).toBe(201);
    expect(res.json().contentType).toBe('video/mp4');
  });

  it('refuses a text file renamed to .png (415), and a PDF', async () => {
    const renamed = await upload(Buffer.from('just some text, not an image\n'.repeat(10)), { filename: 'evil.png', contentType: 'image/png' });
    expect(renamed.statusCode).toBe(415);
    expect(renamed.json()).toMatchObject({ statusCode: 415, code: 'UNSUPPORTED_MEDIA_TYPE' });
    expect(renamed.json().message).toContain('images and videos');
    const pdf = await upload(Buffer.from('%PDF-1.4\n%âãÏÓ\n1 0 obj\n<<>>\nendobj\n'), { filename: 'doc.png', contentType: 'image/png' });
    expect(pdf.statusCode).toBe(415);
  });

  it('refuses a file over the limit with 413', async () => {
    const big = Buffer.concat([PNG, Buffer.alloc(LIMIT)]);
    const res = await upload(big, { filename: 'big.png', contentType: 'image/png' });
    expect(res.statusCode).toBe(413);
    expect(res.json().statusCode).toBe(413);
  });

  it('needs multipart with a part named file', async () => {
    const json = await t.call({ method: 'POST', url: `${base}/media/upload`, auth: owner(), payload: { file: 'x' } });
    expect(json.statusCode).toBe(415);
    const wrong = await upload(PNG, { field: 'image' });
    expect(wrong.statusCode).toBe(400);
    const empty = await upload(Buffer.alloc(0));
    expect(empty.statusCode).toBe(400);
  });

  it('a forged or unknown file URL is 404', async () => {
    const media = (await upload(PNG)).json();
    const path = new URL(media.url).pathname;
    expect((await t.app.inject({ method: 'GET', url: path.replace(/\/[\w-]+\.png$/, '/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA.png') })).statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/media/med_00000000000000000000000000/abc.png` })).statusCode).toBe(404);
  });

  it("posts carry uploaded images; unknown media, videos and another organization's media are refused", async () => {
    const image = (await upload(PNG)).json();
    const video = (await upload(MP4)).json();
    const post = await t.call({ method: 'POST', url: `${base}/content`, auth: owner(), payload: { platform: 'LINKEDIN', body: 'pic', mediaIds: [image.id] } });
    expect(post.statusCode).toBe(201);
    expect(post.json().mediaIds).toEqual([image.id]);
    expect(
      (await t.call({ method: 'POST', url: `${base}/content`, auth: owner(), payload: { platform: 'X', body: 'vid', mediaIds: [video.id] } })).statusCode,
    ).toBe(400);
    const foreign = (await upload(PNG, { auth: { token: t.orgB.token }, orgBase: `/api/v1/orgs/${t.orgB.orgId}` })).json();
    expect(
      (await t.call({ method: 'POST', url: `${base}/content`, auth: owner(), payload: { platform: 'X', body: 'x', mediaIds: [foreign.id] } })).statusCode,
    ).toBe(400);
    expect(
      (
        await t.call({
          method: 'POST',
          url: `${base}/content`,
          auth: owner(),
          payload: { platform: 'X', body: 'x', mediaIds: [image.id, image.id + 'a', 'b', 'c', 'd'] },
        })
      ).statusCode,
    ).toBe(400);
  });

  it("scopes and organizations: media:write uploads, content:read does not; another org's media is 404", async () => {
    const writer = await t.key(t.orgA.orgId, ['media:write']);
    expect((await upload(PNG, { auth: { apiKey: writer } })).statusCode).toBe(201);
    const reader = await t.key(t.orgA.orgId, ['content:read']);
    const denied = await upload(PNG, { auth: { apiKey: reader } });
    expect(denied.statusCode).toBe(403);
    expect(denied.json().code).toBe('INSUFFICIENT_SCOPE');
    const viewer = await t.member(t.orgA.orgId, 'viewer');
    expect((await upload(PNG, { auth: { token: viewer.token } })).statusCode).toBe(403);
    expect((await upload(PNG, { auth: {} })).statusCode).toBe(401);
    const mine = (await upload(PNG)).json();
    // Reading the metadata is a read: viewers may, but not delete.
    expect((await t.call({ method: 'GET', url: `${base}/media/${mine.id}`, auth: { token: viewer.token } })).statusCode).toBe(200);
    expect((await t.call({ method: 'DELETE', url: `${base}/media/${mine.id}`, auth: { token: viewer.token } })).statusCode).toBe(403);
    expect((await t.call({ method: 'GET', url: `${base}/media/${mine.id}`, auth: { apiKey: reader } })).statusCode).toBe(200);
    expect((await t.call({ method: 'GET', url: `/api/v1/orgs/${t.orgB.orgId}/media/${mine.id}`, auth: { token: t.orgB.token } })).statusCode).toBe(404);
    expect((await t.call({ method: 'DELETE', url: `/api/v1/orgs/${t.orgB.orgId}/media/${mine.id}`, auth: { token: t.orgB.token } })).statusCode).toBe(404);
    expect((await upload(PNG, { auth: { apiKey: t.orgB.apiKey } })).statusCode).toBe(404);
    expect((await t.call({ method: 'DELETE', url: `${base}/media/${mine.id}`, auth: owner() })).statusCode).toBe(204);
    expect((await t.app.inject({ method: 'GET', url: new URL(mine.url).pathname })).statusCode).toBe(404);
  });

  it('takes a projectId field', async () => {
    const res = await upload(PNG, { fields: { projectId: t.orgA.projectId } });
    expect(res.json().projectId).toBe(t.orgA.projectId);
    expect((await upload(PNG, { fields: { projectId: t.orgB.projectId } })).statusCode).toBe(404);
  });
});
