import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { eq, inArray } from 'drizzle-orm';
import { fileTypeFromFile } from 'file-type';
import type { Deps } from '../../platform/deps.ts';
import type { Db } from '../../platform/db.ts';
import type { Clock } from '../../platform/clock.ts';
import { deriveKey, safeEqual } from '../../platform/crypto.ts';
import { createHmac } from 'node:crypto';
import { AppError, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import type { Scope } from '../../platform/context.ts';
import { assertCanChange, inScope, inScopeOrgWide, type Tenant } from '../../platform/tenant.ts';
import { media } from './tables.ts';

export type MediaRow = typeof media.$inferSelect;

const ID_PATTERN = /^med_[0-9a-z]{26}$/;

function safeFilename(name: string | undefined): string {
  const base = (name ?? '').split(/[\\/]/).pop() ?? '';
  const cleaned = base
    .replace(/[^\w.\- ]+/g, '_')
    .trim()
    .slice(0, 200);
  return cleaned || 'upload';
}

/**
 * Stores uploads under DATA_DIR/media. The type is sniffed from the bytes (a renamed text file is
 * refused); only images and videos are kept. Files are served at an unguessable, signed URL so
 * browsers and platforms can fetch them without credentials.
 */
export class MediaService {
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly dir: string;
  private readonly publicUrl: string;
  private readonly urlKey: Buffer;
  readonly maxBytes: number;

  constructor(deps: Deps) {
    this.db = deps.db;
    this.clock = deps.clock;
    this.dir = join(deps.config.dataDir, 'media');
    this.publicUrl = deps.config.publicUrl;
    this.urlKey = deriveKey(deps.config.appSecret, 'media-url');
    this.maxBytes = deps.config.mediaMaxBytes;
  }

  private pathOf(row: { orgId: string; id: string }): string {
    return join(this.dir, row.orgId, row.id);
  }

  signature(id: string): string {
    return createHmac('sha256', this.urlKey).update(id).digest('base64url').slice(0, 32);
  }

  urlOf(row: { id: string; extension: string }): string {
    return `${this.publicUrl}/api/v1/media/${row.id}/${this.signature(row.id)}.${row.extension}`;
  }

  publicMedia(row: MediaRow) {
    return {
      id: row.id,
      url: this.urlOf(row),
      contentType: row.contentType,
      size: row.size,
      filename: row.filename,
      projectId: row.projectId,
      createdAt: row.createdAt,
    };
  }

  /** Streams one upload to disk with the size limit, sniffs it, and records it in `projectId` (null: organization-wide), already resolved by OrgsService.projectFor. */
  async store(scope: Scope, projectId: string | null, file: { stream: Readable; filename?: string; truncated: () => boolean }) {
    const id = newId('media', this.clock.now().getTime());
    const target = this.pathOf({ orgId: scope.orgId, id });
    const partial = target + '.part';
    await mkdir(join(this.dir, scope.orgId), { recursive: true });
    const hash = createHash('sha256');
    let size = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        size += chunk.length;
        hash.update(chunk);
        done(null, chunk);
      },
    });
    try {
      await pipeline(file.stream, counter, createWriteStream(partial, { mode: 0o600 }));
      if (file.truncated() || size > this.maxBytes) {
        throw new AppError(413, 'PAYLOAD_TOO_LARGE', `The file is larger than ${this.maxBytes} bytes`);
      }
      if (size === 0) throw new AppError(400, 'VALIDATION_ERROR', 'The file is empty', [{ field: 'file', message: 'is empty' }]);
      const type = await fileTypeFromFile(partial);
      if (!type || !(type.mime.startsWith('image/') || type.mime.startsWith('video/'))) {
        throw new AppError(
          415,
          'UNSUPPORTED_MEDIA_TYPE',
          `Only images and videos can be uploaded; the file's content is ${type ? type.mime : 'not a recognized image or video'}`,
        );
      }
      await rename(partial, target);
      const [row] = await this.db
        .insert(media)
        .values({
          id,
          orgId: scope.orgId,
          projectId,
          filename: safeFilename(file.filename),
          contentType: type.mime,
          extension: type.ext,
          size,
          sha256: hash.digest('hex'),
          createdBy: scope.actor,
          createdAt: this.clock.now(),
        })
        .returning();
      return this.publicMedia(row!);
    } catch (error) {
      await rm(partial, { force: true });
      await rm(target, { force: true });
      throw error;
    }
  }

  /**
   * Uploads without a project are the organization's: a key bound to a project sees those and its
   * project's, and may delete only its project's (CONTRACT §2).
   */
  async get(scope: Scope, id: string): Promise<MediaRow> {
    const [row] = await this.db
      .select()
      .from(media)
      .where(inScopeOrgWide(scope, media, eq(media.id, id)));
    if (!row) throw notFound('Media');
    return row;
  }

  /** The media among these ids that the scope can see (the others are simply absent). */
  async many(scope: Tenant, ids: string[], db: Db = this.db): Promise<MediaRow[]> {
    if (ids.length === 0) return [];
    return db
      .select()
      .from(media)
      .where(inScopeOrgWide(scope, media, inArray(media.id, ids)));
  }

  async delete(scope: Scope, id: string): Promise<void> {
    const found = await this.get(scope, id);
    assertCanChange(scope, found.projectId, 'This upload');
    const [row] = await this.db
      .delete(media)
      .where(inScope(scope, media, eq(media.id, id)))
      .returning();
    if (!row) throw notFound('Media');
    await rm(this.pathOf(row), { force: true });
  }

  read(row: MediaRow): Promise<Buffer> {
    return readFile(this.pathOf(row));
  }

  /** The file behind a public URL, when the signature is right. */
  async open(id: string, signature: string): Promise<{ row: MediaRow; stream: Readable; size: number } | null> {
    if (!ID_PATTERN.test(id) || !safeEqual(signature, this.signature(id))) return null;
    const [row] = await this.db.select().from(media).where(eq(media.id, id));
    if (!row) return null;
    const path = this.pathOf(row);
    const info = await stat(path).catch(() => null);
    if (!info) return null;
    return { row, stream: createReadStream(path), size: info.size };
  }
}
