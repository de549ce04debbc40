import { timestamp } from 'drizzle-orm/pg-core';

/** Every timestamp: with time zone, millisecond precision, read back as a Date. */
export const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date', precision: 3 });
export const createdAt = () => ts('created_at').notNull().defaultNow();
export const updatedAt = () => ts('updated_at').notNull().defaultNow();
