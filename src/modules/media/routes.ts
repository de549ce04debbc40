import multipart from '@fastify/multipart';
import AjvCompiler from '@fastify/ajv-compiler';
import type { FastifySchemaCompiler } from 'fastify';
import { Type, Timestamp, Nullable, OrgParams, errors, orgErrors } from '../../platform/http/schemas.ts';
import type { App } from '../../platform/http/types.ts';
import { ORG_ACCESS, RATE_LIMIT, routesPlugin } from '../../platform/http/plugin.ts';
import { AppError, notFound } from '../../platform/errors.ts';
import { orgOf } from '../../platform/context.ts';
import type { MediaService } from './service.ts';

const MediaSchema = Type.Object(
  {
    id: Type.String(),
    url: Type.String({ description: 'absolute URL serving the file; unguessable, needs no credentials' }),
    contentType: Type.String({ description: 'sniffed from the bytes' }),
    size: Type.Integer(),
    filename: Type.String(),
    projectId: Nullable(Type.String()),
    createdAt: Timestamp,
  },
  { $id: 'Media' },
);

const tags = ['Media'];

/** The upload's form, for the OpenAPI document: one file part named `file`, an optional `projectId` field. */
const UploadForm = Type.Object({
  file: Type.String({ format: 'binary', description: 'the image or video' }),
  projectId: Type.Optional(
    Type.String({
      maxLength: 64,
      description: 'defaults to the project of an API key bound to one (naming another project is 403); otherwise the upload is organization-wide',
    }),
  ),
});

/** The binary file, as served: the type is the one sniffed at upload. */
const FileBody = { schema: Type.String({ format: 'binary' }) };

/**
 * Validator compiler of the upload route. Its multipart body is streamed to disk by the handler
 * (never buffered, so MEDIA_MAX_BYTES and not the JSON body limit applies), and the handler checks
 * the parts itself: the body schema only documents the form and validates nothing. The path
 * parameters are validated as everywhere else (coerced text, every error reported).
 */
const paramsAjv = AjvCompiler()({}, { customOptions: { removeAdditional: false, useDefaults: true, allErrors: true, coerceTypes: 'array' } } as never);
const uploadValidator: FastifySchemaCompiler<unknown> = (route) => (route.httpPart === 'body' ? () => true : paramsAjv(route as never));
const Params = Type.Object({ orgId: Type.String({ maxLength: 64 }), mediaId: Type.String({ maxLength: 64 }) });

/** The organization's projects (the orgs module): an upload's named project is checked as on every route. */
export interface MediaProjectsPort {
  projectFor(scope: { orgId: string; projectId: string | null }, requested: string | null | undefined): Promise<string | null>;
}

export interface MediaRoutesOptions {
  media: MediaService;
  orgs: MediaProjectsPort;
}

/** Upload and metadata, under /orgs/:orgId. */
export const mediaRoutes = routesPlugin<MediaRoutesOptions>('media-routes', [ORG_ACCESS], async (org, { media, orgs }) => {
  org.addSchema(MediaSchema);

  // Multipart parsing only in this scope; the file is streamed to disk, never buffered whole.
  await org.register(async (scope: App) => {
    await scope.register(multipart, { limits: { files: 1, fields: 5, fileSize: media.maxBytes, fieldSize: 1024, parts: 10 } });
    scope.post(
      '/media/upload',
      {
        config: { access: { scope: 'media:write' } },
        validatorCompiler: uploadValidator,
        schema: {
          tags,
          summary: 'Upload an image or video (multipart/form-data, one file part named `file`)',
          description: `The type is sniffed from the bytes: only images and videos are kept (415 otherwise). At most MEDIA_MAX_BYTES (default 50 MB; 413 above). Returns \`{ url, id, contentType, size }\`. Optional field \`projectId\`.`,
          params: OrgParams,
          // The file's maxLength is its size limit in bytes (MEDIA_MAX_BYTES).
          body: {
            content: {
              'multipart/form-data': {
                schema: { ...UploadForm, properties: { ...UploadForm.properties, file: { ...UploadForm.properties.file, maxLength: media.maxBytes } } },
              },
            },
          },
          response: { 201: Type.Ref('Media'), ...orgErrors(413, 415) },
        },
      },
      async (request, reply) => {
        const ctx = orgOf(request);
        if (!request.isMultipart()) throw new AppError(415, 'UNSUPPORTED_MEDIA_TYPE', 'Send multipart/form-data with one file part named "file"');
        let part;
        try {
          part = await request.file();
        } catch (error) {
          throw translate(error);
        }
        if (!part) throw new AppError(400, 'VALIDATION_ERROR', 'No file part; send one part named "file"', [{ field: 'file', message: 'is required' }]);
        if (part.fieldname !== 'file') {
          part.file.resume();
          throw new AppError(400, 'VALIDATION_ERROR', `The file part must be named "file", got "${part.fieldname}"`, [
            { field: 'file', message: 'is required' },
          ]);
        }
        // A form field, which the named-project check of every route (query and JSON body) cannot see: the same rule, applied here.
        const field = part.fields.projectId as { value?: unknown } | undefined;
        let projectId: string | null;
        try {
          projectId = await orgs.projectFor(ctx, typeof field?.value === 'string' && field.value ? field.value : null);
        } catch (error) {
          part.file.resume();
          throw error;
        }
        try {
          const stored = await media.store(ctx, projectId, { stream: part.file, filename: part.filename, truncated: () => part.file.truncated });
          reply.code(201);
          return stored;
        } catch (error) {
          throw translate(error);
        }
      },
    );
  });

  org.get(
    '/media/:mediaId',
    {
      config: { access: { scope: ['content:read', 'media:write'], write: false } },
      schema: { tags, summary: 'Media metadata and URL', params: Params, response: { 200: Type.Ref('Media'), ...orgErrors() } },
    },
    async (request) => media.publicMedia(await media.get(orgOf(request), request.params.mediaId)),
  );

  org.delete(
    '/media/:mediaId',
    {
      config: { access: { scope: 'media:write' } },
      schema: { tags, summary: 'Delete an upload', params: Params, response: { 204: Type.Null(), ...orgErrors() } },
    },
    async (request, reply) => {
      await media.delete(orgOf(request), request.params.mediaId);
      reply.code(204).send(null);
    },
  );
});

function translate(error: unknown): unknown {
  const code = (error as { code?: string }).code;
  if (code === 'FST_REQ_FILE_TOO_LARGE') return new AppError(413, 'PAYLOAD_TOO_LARGE', 'The file is larger than the upload limit');
  if (code === 'FST_FILES_LIMIT' || code === 'FST_PARTS_LIMIT') return new AppError(413, 'PAYLOAD_TOO_LARGE', 'One file per upload');
  if (code === 'FST_INVALID_MULTIPART_CONTENT_TYPE') return new AppError(415, 'UNSUPPORTED_MEDIA_TYPE', 'Send multipart/form-data');
  return error;
}

/** The public, signed file URL: outside /orgs so browsers and social platforms can fetch it. */
export const mediaFileRoutes = routesPlugin<Pick<MediaRoutesOptions, 'media'>>('media-file-routes', [RATE_LIMIT], (api, { media }) => {
  api.get(
    '/media/:mediaId/:file',
    {
      schema: {
        // No credentials: the signed file name is one (browsers and social platforms fetch it).
        tags,
        summary: 'Serve an uploaded file (the `url` returned by the upload)',
        security: [],
        params: Type.Object({ mediaId: Type.String({ maxLength: 64 }), file: Type.String({ maxLength: 80 }) }),
        response: {
          200: { description: 'the file, as uploaded; `Content-Type` is the type sniffed at upload', content: { 'image/*': FileBody, 'video/*': FileBody } },
          ...errors(404),
        },
      },
    },
    async (request, reply) => {
      const signature = request.params.file.split('.')[0] ?? '';
      const found = await media.open(request.params.mediaId, signature);
      if (!found) throw notFound('Media');
      reply.header('content-type', found.row.contentType);
      reply.header('content-length', String(found.size));
      reply.header('x-content-type-options', 'nosniff');
      reply.header('content-disposition', 'inline');
      reply.header('cache-control', 'private, max-age=86400');
      // The 200 schema documents the bytes; a stream is piped as is, never serialized.
      return reply.send(found.stream as never);
    },
  );
});
