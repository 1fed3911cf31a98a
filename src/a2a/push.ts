// A task's push notification configs (docs/a2a.md "Push notifications"): each is its maker's alone (another
// caller's reads as unknown, -32001), at most MAX_PUSH_CONFIGS per task, its `url` http(s) of at most
// MAX_PUSH_URL characters; the token and the authentication credentials are sealed by the vault and never given
// back. Deliveries of the task's later updates are push-delivery.ts's.
import type { Kysely, Selectable } from 'kysely'
import { PostgresAdapter } from 'kysely'
import type { TaskPushNotificationConfig } from '@a2a-js/sdk'
import { RequestMalformedError, TaskNotFoundError } from '@a2a-js/sdk/errors'
import type { Database } from '../db/database.js'
import type { Vault } from '../credentials/vault.js'
import { newId, now } from '../ids.js'
import type { A2aPushConfigTable } from './a2a.table.js'
import { signerOf } from './push-signing.js'

export const MAX_PUSH_CONFIGS = 10
export const MAX_PUSH_URL = 2048
/** The longest config id a caller may choose. */
export const MAX_PUSH_CONFIG_ID = 128
/** The longest token, and the longest authentication credentials. */
export const MAX_PUSH_SECRET = 4096

type PushConfigRow = Selectable<A2aPushConfigTable>

// Header values: visible ASCII, spaces and tabs (no line breaks, which would forge headers).
const HEADER_VALUE = /^[\t\x20-\x7e]*$/
// An HTTP authentication scheme is a token (RFC 9110 §11.1).
const SCHEME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/

/** Every bound of a config, the offending field named; a config that passes is safe to store and to send to. */
export function checkPushConfig(config: TaskPushNotificationConfig, field = 'params'): void {
  const url = config.url ?? ''
  if (url.length > MAX_PUSH_URL) throw new RequestMalformedError(`${field}.url is ${url.length} characters; at most ${MAX_PUSH_URL}.`)
  let parsed: URL | undefined
  try {
    parsed = new URL(url)
  } catch {
    parsed = undefined
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) throw new RequestMalformedError(`${field}.url must be an absolute http or https URL.`)
  if (parsed.username || parsed.password) throw new RequestMalformedError(`${field}.url must not carry a user name or password: use authentication.`)
  const id = config.id ?? ''
  if (id.length > MAX_PUSH_CONFIG_ID || !/^[\x21-\x7e]*$/.test(id)) throw new RequestMalformedError(`${field}.id must be at most ${MAX_PUSH_CONFIG_ID} visible ASCII characters.`)
  const token = config.token ?? ''
  if (token.length > MAX_PUSH_SECRET || !HEADER_VALUE.test(token)) throw new RequestMalformedError(`${field}.token must be at most ${MAX_PUSH_SECRET} printable ASCII characters.`)
  if (token && !signerOf(token)) throw new RequestMalformedError(`${field}.token starts with whsec_ but is not a Standard Webhooks secret (whsec_ and base64).`)
  const auth = config.authentication
  if (auth) {
    if (!SCHEME.test(auth.scheme ?? '')) throw new RequestMalformedError(`${field}.authentication.scheme must be an HTTP authentication scheme (a token such as Bearer or Basic).`)
    const credentials = auth.credentials ?? ''
    if (credentials === '' || credentials.length > MAX_PUSH_SECRET || !HEADER_VALUE.test(credentials)) {
      throw new RequestMalformedError(`${field}.authentication.credentials must be 1 to ${MAX_PUSH_SECRET} printable ASCII characters.`)
    }
    if (!token && !signerOf(credentials)) throw new RequestMalformedError(`${field}.authentication.credentials start with whsec_ but are not a Standard Webhooks secret (whsec_ and base64).`)
  }
}

/** The config as its maker may read it: its id, task and URL, the scheme of its authentication; no secret. */
export function toPushConfig(row: PushConfigRow): TaskPushNotificationConfig {
  return {
    tenant: '', id: row.config_id, taskId: row.run_id, url: row.url, token: '',
    authentication: row.auth_scheme ? { scheme: row.auth_scheme, credentials: '' } : undefined,
  }
}

const ofMaker = (db: Kysely<Database>, runId: string, principalId: string) =>
  db.selectFrom('a2a_push_configs').selectAll().where('run_id', '=', runId).where('principal_id', '=', principalId)

/**
 * Stores the config (checked by checkPushConfig) as the maker's, replacing the maker's config of the same id;
 * without an id it gets a UUIDv7. Refused past MAX_PUSH_CONFIGS on the task (all makers' together).
 */
export async function savePushConfig(
  deps: { vault: Vault },
  trx: Kysely<Database>,
  input: { runId: string; principalId: string; config: TaskPushNotificationConfig },
): Promise<TaskPushNotificationConfig> {
  const { runId, principalId, config } = input
  // Concurrent creates on one task count one after the other: the task's row is the lock (SQLite writes one at a time).
  const lock = trx.selectFrom('a2a_tasks').select('run_id').where('run_id', '=', runId)
  await (trx.getExecutor().adapter instanceof PostgresAdapter ? lock.forUpdate() : lock).execute()
  const configId = config.id || newId()
  const existing = await ofMaker(trx, runId, principalId).where('config_id', '=', configId).executeTakeFirst()
  if (!existing) {
    const counted = await trx.selectFrom('a2a_push_configs').select((eb) => eb.fn.countAll<number | string>().as('n')).where('run_id', '=', runId).executeTakeFirst()
    if (Number(counted?.n ?? 0) >= MAX_PUSH_CONFIGS) {
      throw new RequestMalformedError(`The task has ${MAX_PUSH_CONFIGS} push notification configs, the most it may have: delete one, or send this one with the id of one of yours to replace it.`)
    }
  }
  const id = existing?.id ?? newId()
  const token = config.token ? deps.vault.seal(config.token, id) : null
  const credentials = config.authentication ? deps.vault.seal(config.authentication.credentials, id) : null
  const at = now()
  const row: PushConfigRow = {
    id, run_id: runId, principal_id: principalId, config_id: configId, url: config.url,
    token_key_id: token?.keyId ?? null, token_ciphertext: token?.ciphertext ?? null,
    auth_scheme: config.authentication?.scheme ?? null,
    credentials_key_id: credentials?.keyId ?? null, credentials_ciphertext: credentials?.ciphertext ?? null,
    created_at: existing?.created_at ?? at, updated_at: at,
  }
  if (existing) {
    const { id: _id, created_at: _created, ...changes } = row
    await trx.updateTable('a2a_push_configs').set(changes).where('id', '=', id).execute()
  } else {
    await trx.insertInto('a2a_push_configs').values(row).execute()
  }
  return toPushConfig(row)
}

/** The maker's config of the task, or -32001 (another caller's config reads as unknown). */
export async function findPushConfig(db: Kysely<Database>, runId: string, principalId: string, configId: string): Promise<TaskPushNotificationConfig> {
  const row = configId ? await ofMaker(db, runId, principalId).where('config_id', '=', configId).executeTakeFirst() : undefined
  if (!row) throw new TaskNotFoundError(`No push notification config ${configId} of yours on task ${runId}.`)
  return toPushConfig(row)
}

/** The maker's configs of the task, oldest first (at most MAX_PUSH_CONFIGS: one page). */
export async function listPushConfigs(db: Kysely<Database>, runId: string, principalId: string): Promise<TaskPushNotificationConfig[]> {
  const rows = await ofMaker(db, runId, principalId).orderBy('created_at').orderBy('id').execute()
  return rows.map(toPushConfig)
}

/** Deletes the maker's config and its deliveries not yet sent; -32001 when the maker has none of that id. */
export async function deletePushConfig(trx: Kysely<Database>, runId: string, principalId: string, configId: string): Promise<void> {
  const row = configId ? await ofMaker(trx, runId, principalId).where('config_id', '=', configId).executeTakeFirst() : undefined
  if (!row) throw new TaskNotFoundError(`No push notification config ${configId} of yours on task ${runId}.`)
  await trx.deleteFrom('a2a_push_deliveries').where('config_row_id', '=', row.id).execute()
  await trx.deleteFrom('a2a_push_configs').where('id', '=', row.id).execute()
}
