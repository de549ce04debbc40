-- An outbound e-mail's own subject (a campaign step's, CONTRACT §9): sent as it is, starting a new
-- thread; messages without one follow up in the thread. Nullable, no default: no row is rewritten.
ALTER TABLE "messages" ADD COLUMN "subject" text;
