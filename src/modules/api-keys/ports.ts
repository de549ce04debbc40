/** What the api-keys module's service is built with besides the deps, handed in by services.ts. */

/** The bus: a revoked key is dropped from every instance's cache the moment it is deleted. */
export interface BusPort {
  publish(channel: string, message: unknown): Promise<void>;
  subscribe(channel: string, handler: (message: unknown) => void): () => void;
}

export interface ApiKeysPorts {
  bus: BusPort;
}
