CREATE TABLE "widget_positions" (
	"contact_id" text PRIMARY KEY NOT NULL,
	"seq" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "messages" ADD COLUMN "stream_seq" bigint;--> statement-breakpoint
ALTER TABLE "widget_positions" ADD CONSTRAINT "widget_positions_contact_id_contacts_id_fk" FOREIGN KEY ("contact_id") REFERENCES "public"."contacts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "messages_stream_idx" ON "messages" USING btree ("conversation_id","stream_seq") WHERE stream_seq is not null;--> statement-breakpoint
-- The web visitors' messages stored so far, numbered per contact in the order they were written.
WITH numbered AS (
	SELECT m.id, row_number() OVER (PARTITION BY c.contact_id ORDER BY m.at, m.id) AS n
	FROM messages m JOIN conversations c ON c.id = m.conversation_id
	WHERE c.channel = 'web' AND NOT m.private
)
UPDATE messages m SET stream_seq = numbered.n FROM numbered WHERE m.id = numbered.id;--> statement-breakpoint
INSERT INTO widget_positions (contact_id, seq)
	SELECT c.contact_id, max(m.stream_seq) FROM messages m JOIN conversations c ON c.id = m.conversation_id
	WHERE m.stream_seq IS NOT NULL GROUP BY c.contact_id;--> statement-breakpoint
-- Every insert and status change of a web visitor's message that is not private takes the contact's
-- next widget stream position (CONTRACT §8). The upsert's row lock orders the positions as their
-- transactions commit. Other channels pay one primary-key probe of the conversation.
CREATE FUNCTION widget_stream_position() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF NEW.private THEN
		RETURN NEW;
	END IF;
	INSERT INTO widget_positions AS p (contact_id, seq)
		SELECT c.contact_id, 1 FROM conversations c WHERE c.id = NEW.conversation_id AND c.channel = 'web'
		ON CONFLICT (contact_id) DO UPDATE SET seq = p.seq + 1
		RETURNING p.seq INTO NEW.stream_seq;
	RETURN NEW;
END
$$;--> statement-breakpoint
CREATE TRIGGER messages_widget_position BEFORE INSERT ON messages
	FOR EACH ROW EXECUTE FUNCTION widget_stream_position();--> statement-breakpoint
CREATE TRIGGER messages_widget_position_status BEFORE UPDATE OF status ON messages
	FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION widget_stream_position();
