import { randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { processAlive } from '../../platform/db.ts';
import { sha256Hex } from '../../platform/crypto.ts';

/**
 * How the CLI reaches the server that holds the embedded database: the server writes its address
 * and a random token into DATA_DIR/admin.json, readable only by the OS user that runs it (0600);
 * the admin routes accept that token only, and only from this machine. Whoever can read the file
 * could read the database files beside it anyway, so it grants nothing new.
 */
export interface AdminChannel {
  pid: number;
  url: string;
  token: string;
}

export const channelFile = (dataDir: string) => join(dataDir, 'admin.json');

export function newAdminToken(): string {
  return randomBytes(32).toString('base64url');
}

/** A URL this machine can reach the listening server on (a wildcard address becomes loopback). */
export function localUrl(address: AddressInfo | string | null): string {
  if (!address || typeof address === 'string') throw new Error('the server is not listening on a TCP port');
  const v6 = address.family === 'IPv6' || (address.family as unknown) === 6;
  const host = address.address === '0.0.0.0' ? '127.0.0.1' : address.address === '::' ? '::1' : address.address;
  return `http://${v6 ? `[${host}]` : host}:${address.port}`;
}

export function writeChannel(dataDir: string, channel: AdminChannel): () => void {
  const file = channelFile(dataDir);
  const temp = `${file}.${process.pid}.tmp`;
  // Created with 0600 before the token is in it, then moved into place whole.
  rmSync(temp, { force: true });
  writeFileSync(temp, JSON.stringify(channel) + '\n', { mode: 0o600, flag: 'wx' });
  renameSync(temp, file);
  return () => {
    try {
      if ((JSON.parse(readFileSync(file, 'utf8')) as AdminChannel).pid === process.pid) rmSync(file, { force: true });
    } catch {
      // gone or replaced
    }
  };
}

/** The running server's channel, if the process that wrote it (and holds the database) is alive. */
export function readChannel(dataDir: string, holderPid?: number): AdminChannel | null {
  let channel: AdminChannel;
  try {
    channel = JSON.parse(readFileSync(channelFile(dataDir), 'utf8')) as AdminChannel;
  } catch {
    return null;
  }
  if (typeof channel.url !== 'string' || typeof channel.token !== 'string' || !Number.isInteger(channel.pid)) return null;
  if (holderPid !== undefined && channel.pid !== holderPid) return null;
  return processAlive(channel.pid) ? channel : null;
}

/** Constant-time comparison of a presented token with the expected one. */
export function tokenMatches(presented: string, expected: string): boolean {
  return timingSafeEqual(Buffer.from(sha256Hex(presented), 'hex'), Buffer.from(sha256Hex(expected), 'hex'));
}
