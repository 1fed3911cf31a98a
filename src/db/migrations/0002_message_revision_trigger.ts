// Keeps a message's previous content as a revision inside the UPDATE that replaces it, so that an edit is a
// single atomic statement on either database. Frozen once landed.
import { PostgresAdapter, sql, type Kysely } from 'kysely'

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`
      create function keep_message_revision() returns trigger language plpgsql as $$
      begin
        insert into message_revisions (message_id, revision, content, text, created_at)
        values (old.id, old.revision, old.content, old.text, coalesce(old.edited_at, old.created_at));
        return new;
      end
      $$`.execute(db)
    await sql`
      create trigger messages_keep_revision before update of content on messages
      for each row execute function keep_message_revision()`.execute(db)
    return
  }
  await sql`
    create trigger messages_keep_revision before update of content on messages
    for each row begin
      insert into message_revisions (message_id, revision, content, text, created_at)
      values (old.id, old.revision, old.content, old.text, coalesce(old.edited_at, old.created_at));
    end`.execute(db)
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger messages_keep_revision${db.getExecutor().adapter instanceof PostgresAdapter ? sql` on messages` : sql``}`.execute(db)
  if (db.getExecutor().adapter instanceof PostgresAdapter) await sql`drop function keep_message_revision()`.execute(db)
}
