import { type Kysely, sql } from 'kysely';

// The clips POST /clips asked for that are not made yet (docs/api.md, POST /clips). Production makes
// a clip some seconds after the request answers, and GET /clips lists it only then; helixd keeps
// each request's clip here, its record as the request made it, with the instant on the server clock
// (Unix ms) when it is due. Every serving process takes the due rows (src/records/clip-jobs.ts), each
// in the transaction that deletes its row and writes its clip through the write path: a clip is made
// once whichever process, worker or instance gets there first, and a row whose process died is made
// by another. The rows are no records: nothing exports, imports or lists them.
//
// Tables added: clip_jobs, with clip_jobs_due (due_at, id): the rows in the order they fall due, read
// from its low end. No column of another table changes.

export async function up(db: Kysely<unknown>): Promise<void> {
  const run = (text: string) => sql.raw(text).execute(db);
  await run('create table clip_jobs (id text primary key, due_at bigint not null, record text not null)');
  await run('create index clip_jobs_due on clip_jobs (due_at, id)');
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql.raw('drop index clip_jobs_due').execute(db);
  await sql.raw('drop table clip_jobs').execute(db);
}
