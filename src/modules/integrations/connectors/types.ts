/** What a connector needs to publish one post. */
export interface PublishRequest {
  /** The final text: body plus hashtags, as the platform will show it. */
  text: string;
  hashtags: string[];
  body: string;
  media: { id: string; contentType: string; size: number; read(): Promise<Buffer> }[];
}

export type PublishOutcome =
  { ok: true; externalId: string; url: string } | { ok: false; code: string; message: string; retryable: boolean; auth?: boolean; retryAfterS?: number };

export interface ConnectorContext {
  baseUrl: string;
  allowPrivate: boolean;
  timeoutMs: number;
  signal?: AbortSignal;
}

/** What a dry run shows: the request that would be sent, without the credentials. */
export interface PublishPreview {
  method: string;
  url: string;
  body: Record<string, unknown>;
  mediaUploads: number;
}

export interface Connector {
  provider: 'linkedin' | 'x';
  platform: 'LINKEDIN' | 'X';
  /** Checks the credentials' shape; returns the message of what is wrong, or null. */
  checkCredentials(credentials: Record<string, unknown>): string | null;
  publish(ctx: ConnectorContext, credentials: Record<string, string>, request: PublishRequest): Promise<PublishOutcome>;
  preview(ctx: ConnectorContext, credentials: Record<string, string>, request: PublishRequest): PublishPreview;
}
