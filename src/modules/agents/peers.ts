/**
 * Late access to the other services: agents and reports call modules built after them (content,
 * workflows, approvals) and use a capability only when that module provides it.
 */
export interface Peers {
  current?: object;
}

export function withPeers<T extends object>(peers: Peers, services: T): T {
  peers.current = services;
  return services;
}

/** The named service when it exists and has the method, else undefined. */
export function peerWith<T>(peers: Peers, service: string, method: string): T | undefined {
  const found = (peers.current as Record<string, unknown> | undefined)?.[service] as Record<string, unknown> | undefined;
  return found && typeof found[method] === 'function' ? (found as T) : undefined;
}
