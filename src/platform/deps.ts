import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.ts';
import type { Clock } from './clock.ts';
import type { Database, Db } from './db.ts';

/** What every service is built from. */
export interface Deps {
  config: Config;
  database: Database;
  db: Db;
  clock: Clock;
  log: FastifyBaseLogger;
}
