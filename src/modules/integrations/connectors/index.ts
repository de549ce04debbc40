import { linkedin } from './linkedin.ts';
import { x } from './x.ts';
import type { Connector } from './types.ts';

export const PROVIDERS = ['linkedin', 'x'] as const;
export type Provider = (typeof PROVIDERS)[number];

const byProvider: Record<Provider, Connector> = { linkedin, x };

export function connectorFor(provider: string): Connector | undefined {
  return byProvider[provider as Provider];
}

/** The provider that publishes to a post platform. */
export function providerOfPlatform(platform: string): Provider | undefined {
  return platform === 'LINKEDIN' ? 'linkedin' : platform === 'X' ? 'x' : undefined;
}

export type { Connector } from './types.ts';
