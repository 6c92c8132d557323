import { type Kysely, PostgresAdapter, sql } from 'kysely';

// GET /search/channels and GET /search/categories (docs/api.md, "Search"): a search is a prefix of
// a key, and a prefix is a range of a B-tree in key order, so a page is one index range from the
// cursor that stops after `first` + 1 rows, never a scan of the users or the games and never a sort
// (a trigram or full-text index would find the matches in no order, and every page would sort all
// of them). No extension is needed on PostgreSQL, and both stores hold the same keys in the same
// order, so they answer alike.
//
// Tables added (derived: kept by triggers, never exported, filled here from what the store holds):
// - search_channel_keys (key, user_id, live): a user's login and display name, each with the ASCII
//   letters lower-cased and every space and "_" removed, at most KEY_CHARS characters; one row per
//   distinct non-empty key. `live` is 1 while the user has a stream (the partial index
//   search_channel_keys_live holds those rows alone, for `live_only`).
// - search_game_keys (key, game_id): a game's name, ASCII letters lower-cased, from each place a
//   word starts (the first character, and every letter or digit that follows an ASCII character that
//   is neither: a space, "-", ":"...), at most KEY_CHARS characters from there. "World of Warcraft"
//   is found by "world", "of w" and "warc".
// - search_positions (n): the numbers 1..MAX_NAME_CHARS, the places a word can start; SQLite's
//   triggers may not use a recursive query.
// Each has an index (id, key) that a page probes to list an item once when several of its keys
// match, and that the triggers delete by.
//
// Collation: keys compare by code point on both stores (SQLite's BINARY, PostgreSQL's "C"), so a
// prefix's range is the same and the order is the same whatever the database's locale. Letters are
// lower-cased for A-Z only: SQLite's lower() changes no other letter, and PostgreSQL's would follow
// the database's locale; `translate` there does exactly what SQLite's lower() does.
//
// Triggers: SQLite, one per row and event. PostgreSQL: inserts and deletes per statement with
// transition tables (an import or a seed writes thousands of rows in one statement), updates per row
// with a column list and a WHEN (PostgreSQL allows no column list with transition tables), so that
// a stream's new viewer count or a user's new description costs nothing here.

/** The characters of a key; a query is cut to as many (src/store/search.ts). */
export const KEY_CHARS = 100;
/** The places a word of a game's name may start: a name is at most 256 characters (MAX_INDEXED_TEXT). */
const MAX_NAME_CHARS = 256;
const ALNUM = '0123456789abcdefghijklmnopqrstuvwxyz';

function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** The SQL of the keys of both stores, each written once for both. */
function keySql(pg: boolean) {
  const lower = (x: string) =>
    pg ? `translate(${x}, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')` : `lower(${x})`;
  // A character that ends a word: ASCII, and neither a letter nor a digit.
  const separator = (c: string) =>
    pg
      ? `(ascii(${c}) < 128 and strpos('${ALNUM}', ${c}) = 0)`
      : `(unicode(${c}) < 128 and instr('${ALNUM}', ${c}) = 0)`;
  const live = (userId: string) =>
    pg
      ? `(exists (select 1 from streams s where s.user_id = ${userId}))::integer`
      : `exists (select 1 from streams s where s.user_id = ${userId})`;
  const channelKey = (x: string) =>
    `substr(replace(replace(${lower(x)}, '_', ''), ' ', ''), 1, ${KEY_CHARS})`;
  return {
    /**
     * The rows (key, user_id, live) of the users that `from` names (`u` its alias for the users'
     * columns: `from users u`, or a transition table).
     */
    channelRows: (from: string) => `
      select distinct k.key, k.user_id, ${live('k.user_id')} from (
        select ${channelKey('u.login')} as key, u.id as user_id ${from}
        union all
        select ${channelKey('u.display_name')}, u.id ${from}
      ) k where k.key <> ''`,
    /** The rows (key, game_id) of the games that `from` names (`g` its alias, with id and name). */
    gameRows: (from: string) => `
      select distinct substr(w.lname, p.n, ${KEY_CHARS}), w.id
      from (select g.id, ${lower('g.name')} as lname ${from}) w
      join search_positions p on p.n <= length(w.lname)
      where p.n = 1
        or (${separator('substr(w.lname, p.n - 1, 1)')} and not ${separator('substr(w.lname, p.n, 1)')})`,
    live,
  };
}

const changed = (columns: readonly string[], distinct: string) =>
  columns.map((c) => `old.${c} ${distinct} new.${c}`).join(' or ');

/** SQLite's triggers: their name, event (with its table and WHEN) and body. */
function sqliteTriggers(): [string, string, string][] {
  const k = keySql(false);
  // In a row trigger the row is `new` or `old`: a one-row FROM names its columns as a table would.
  const userRow = (r: 'new') =>
    `from (select ${r}.id as id, ${r}.login as login, ${r}.display_name as display_name) u`;
  const gameRow = (r: 'new') => `from (select ${r}.id as id, ${r}.name as name) g`;
  const setLive = (userId: string) =>
    `update search_channel_keys set live = ${k.live(userId)} where user_id = ${userId} and live <> ${k.live(userId)};`;
  return [
    [
      'search_users_insert',
      'after insert on users',
      `insert into search_channel_keys ${k.channelRows(userRow('new'))};`,
    ],
    [
      'search_users_update',
      `after update of id, login, display_name on users when ${changed(['id', 'login', 'display_name'], 'is not')}`,
      `delete from search_channel_keys where user_id = old.id;
       insert into search_channel_keys ${k.channelRows(userRow('new'))};`,
    ],
    [
      'search_users_delete',
      'after delete on users',
      'delete from search_channel_keys where user_id = old.id;',
    ],
    [
      'search_games_insert',
      'after insert on games',
      `insert into search_game_keys ${k.gameRows(gameRow('new'))};`,
    ],
    [
      'search_games_update',
      `after update of id, name on games when ${changed(['id', 'name'], 'is not')}`,
      `delete from search_game_keys where game_id = old.id;
       insert into search_game_keys ${k.gameRows(gameRow('new'))};`,
    ],
    ['search_games_delete', 'after delete on games', 'delete from search_game_keys where game_id = old.id;'],
    ['search_streams_insert', 'after insert on streams', setLive('new.user_id')],
    [
      'search_streams_update',
      `after update of user_id on streams when ${changed(['user_id'], 'is not')}`,
      setLive('old.user_id') + setLive('new.user_id'),
    ],
    ['search_streams_delete', 'after delete on streams', setLive('old.user_id')],
  ];
}

/** PostgreSQL's trigger functions (name, body) and triggers (table, CREATE TRIGGER). */
function postgresTriggers() {
  const k = keySql(true);
  const setLive = (ids: string) => `
    update search_channel_keys c set live = ${k.live('c.user_id')}
    where c.user_id in (${ids}) and c.live <> ${k.live('c.user_id')};`;
  const functions: [string, string][] = [
    [
      'search_users_rows',
      `if tg_op = 'DELETE' then
         delete from search_channel_keys c using old_rows o where c.user_id = o.id;
       else
         insert into search_channel_keys ${k.channelRows('from new_rows u')};
       end if;`,
    ],
    [
      'search_users_row',
      `delete from search_channel_keys where user_id = old.id;
       insert into search_channel_keys ${k.channelRows('from (select new.id, new.login, new.display_name) u (id, login, display_name)')};`,
    ],
    [
      'search_games_rows',
      `if tg_op = 'DELETE' then
         delete from search_game_keys c using old_rows o where c.game_id = o.id;
       else
         insert into search_game_keys ${k.gameRows('from new_rows g')};
       end if;`,
    ],
    [
      'search_games_row',
      `delete from search_game_keys where game_id = old.id;
       insert into search_game_keys ${k.gameRows('from (select new.id, new.name) g (id, name)')};`,
    ],
    [
      'search_streams_rows',
      `if tg_op = 'DELETE' then ${setLive('select user_id from old_rows')}
       else ${setLive('select user_id from new_rows')}
       end if;`,
    ],
    ['search_streams_row', `${setLive('old.user_id')} ${setLive('new.user_id')}`],
  ];
  const perStatement = (table: string, event: 'insert' | 'delete', fn: string) =>
    `create trigger search_${table}_${event} after ${event} on ${table}
     referencing ${event === 'insert' ? 'new' : 'old'} table as ${event === 'insert' ? 'new' : 'old'}_rows
     for each statement execute function ${fn}()`;
  const perRow = (table: string, columns: string[], fn: string) =>
    `create trigger search_${table}_update after update of ${columns.join(', ')} on ${table} for each row
     when (${changed(columns, 'is distinct from')}) execute function ${fn}()`;
  const triggers: [string, string][] = [
    ['users', perStatement('users', 'insert', 'search_users_rows')],
    ['users', perStatement('users', 'delete', 'search_users_rows')],
    ['users', perRow('users', ['id', 'login', 'display_name'], 'search_users_row')],
    ['games', perStatement('games', 'insert', 'search_games_rows')],
    ['games', perStatement('games', 'delete', 'search_games_rows')],
    ['games', perRow('games', ['id', 'name'], 'search_games_row')],
    ['streams', perStatement('streams', 'insert', 'search_streams_rows')],
    ['streams', perStatement('streams', 'delete', 'search_streams_rows')],
    ['streams', perRow('streams', ['user_id'], 'search_streams_row')],
  ];
  return { functions, triggers };
}

/**
 * Fills both key tables anew from the users, games and streams the store holds: the migration on
 * a store that holds data, and a bulk load that wrote those tables with the triggers dropped.
 */
export async function fillSearchKeys(db: Kysely<unknown>): Promise<void> {
  const k = keySql(isPostgres(db));
  await sql.raw('delete from search_channel_keys').execute(db);
  await sql.raw('delete from search_game_keys').execute(db);
  await sql.raw(`insert into search_channel_keys ${k.channelRows('from users u')}`).execute(db);
  await sql.raw(`insert into search_game_keys ${k.gameRows('from games g')}`).execute(db);
}

export async function up(db: Kysely<unknown>): Promise<void> {
  const pg = isPostgres(db);
  const run = (text: string) => sql.raw(text).execute(db);
  const keyText = pg ? 'text collate "C"' : 'text';
  const withoutRowid = pg ? '' : ' without rowid';
  await run(`create table search_positions (n integer primary key)${withoutRowid}`);
  await run(
    `insert into search_positions (n) values ${Array.from({ length: MAX_NAME_CHARS }, (_, i) => `(${i + 1})`).join(', ')}`,
  );
  await run(`create table search_channel_keys (key ${keyText} not null, user_id bigint not null,
    live integer not null, primary key (key, user_id))${withoutRowid}`);
  await run('create index search_channel_keys_user on search_channel_keys (user_id, key)');
  // `live = 1` is written as a literal in the queries too: both stores use a partial index only
  // for a WHERE clause that says what its predicate says.
  await run('create index search_channel_keys_live on search_channel_keys (key, user_id) where live = 1');
  await run(`create table search_game_keys (key ${keyText} not null, game_id bigint not null,
    primary key (key, game_id))${withoutRowid}`);
  await run('create index search_game_keys_game on search_game_keys (game_id, key)');
  await fillSearchKeys(db);
  if (pg) {
    const { functions, triggers } = postgresTriggers();
    for (const [name, body] of functions)
      await run(`create function ${name}() returns trigger language plpgsql as $$
        begin ${body} return null; end $$`);
    for (const [, ddl] of triggers) await run(ddl);
  } else
    for (const [name, event, body] of sqliteTriggers())
      await run(`create trigger ${name} ${event} begin ${body} end`);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  const pg = isPostgres(db);
  const run = (text: string) => sql.raw(text).execute(db);
  if (pg) {
    const { functions, triggers } = postgresTriggers();
    for (const [table, ddl] of triggers) {
      const name = /create trigger (\w+)/.exec(ddl)?.[1];
      await run(`drop trigger ${name} on ${table}`);
    }
    for (const [name] of functions) await run(`drop function ${name}()`);
  } else for (const [name] of sqliteTriggers()) await run(`drop trigger ${name}`);
  await run('drop table search_game_keys');
  await run('drop table search_channel_keys');
  await run('drop table search_positions');
}
