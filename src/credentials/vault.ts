// The vault: AES-256-GCM encryption of credential secrets (node:crypto). Each ciphertext carries the id of the
// key that made it, so TANDEM_SECRET_KEY_PREVIOUS keeps decrypting during a rotation until `credentials rekey`.
//
// Where the key comes from (openVault, at start-up): TANDEM_SECRET_KEY; else, with SQLite on a file, a random
// key in `secret.key` beside the database file (written by the first start, mode 0600); with sqlite::memory:,
// a key that lives as long as the process. PostgreSQL without TANDEM_SECRET_KEY never gets here (config.ts).
//
// Every key a vault opens joins a process-wide key ring, looked up by key id: readSecret (src/credentials/
// store.ts) decrypts through it without being handed a vault, whichever part of the service calls it. And
// buildApp ties its vault to its database (attachVault), so that code handed only a `db` or a transaction of it
// (the run state machine sealing a push task's token) seals with that app's current key: vaultOf(db).
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { dbContext } from '../db/context.js'
import { createCipheriv, createDecipheriv, createHash, createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto'
import { readFileSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { ConfigError, parseSecretKey, type Config } from '../config.js'
import { secureRandomBytes } from '../ids.js'

declare module '../db/context.js' {
  interface DbContext {
    /** The vault of the app on this database (attachVault, by buildApp). */
    vault?: Vault
  }
}

const IV_BYTES = 12
const TAG_BYTES = 16

export interface Sealed {
  keyId: string
  /** base64 of IV (12 bytes) ‖ tag (16 bytes) ‖ ciphertext. */
  ciphertext: string
}

/** A key's id: a digest of the key, so it names the key without revealing it and needs no storage. */
export function keyIdOf(key: Buffer): string {
  return createHash('sha256').update('tandem vault key id\0').update(key).digest('hex').slice(0, 16)
}

/** A sealed secret that no key of this process opens (wrong or missing key, or altered data). */
export class VaultError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'VaultError'
  }
}

// Keys are held as KeyObjects: node:crypto imports a Buffer key anew on every cipher it makes (most of a
// small seal's cost), a KeyObject once.
const ring = new Map<string, KeyObject>()

function open(keys: Map<string, KeyObject>, sealed: Sealed, aad: string): string {
  const key = keys.get(sealed.keyId)
  if (!key) throw new VaultError(`the secret is encrypted with key ${sealed.keyId}, which this instance does not have (set TANDEM_SECRET_KEY or TANDEM_SECRET_KEY_PREVIOUS)`)
  const data = Buffer.from(sealed.ciphertext, 'base64')
  const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES })
  decipher.setAAD(Buffer.from(aad, 'utf8'))
  decipher.setAuthTag(data.subarray(IV_BYTES, IV_BYTES + TAG_BYTES))
  try {
    return Buffer.concat([decipher.update(data.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8')
  } catch {
    throw new VaultError(`the secret sealed with key ${sealed.keyId} does not authenticate (altered, or sealed for another credential)`)
  }
}

export class Vault {
  readonly keyId: string
  private readonly keys = new Map<string, KeyObject>()

  constructor(current: Buffer, previous: Buffer[] = []) {
    this.keyId = keyIdOf(current)
    for (const key of [current, ...previous]) {
      const keyObject = createSecretKey(key)
      this.keys.set(keyIdOf(key), keyObject)
      ring.set(keyIdOf(key), keyObject)
    }
  }

  /** Encrypts with the current key; `aad` (the credential id) binds the ciphertext to its row. */
  seal(plaintext: string, aad: string): Sealed {
    const iv = secureRandomBytes(IV_BYTES)
    const cipher = createCipheriv('aes-256-gcm', this.keys.get(this.keyId) as KeyObject, iv, { authTagLength: TAG_BYTES })
    cipher.setAAD(Buffer.from(aad, 'utf8'))
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
    return { keyId: this.keyId, ciphertext: Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64') }
  }

  /**
   * A push task's result token, derived from the task id under a key of this vault (the current one unless
   * `keyId` names a previous one): HMAC-SHA256 under a key derived from the vault key for this use only, so the
   * delivery job needs to carry the key's id alone, not the token. As unguessable as a random token without the
   * vault key, as a sealed one is; one HMAC instead of sealing at the task's start and opening at each delivery.
   */
  taskToken(taskId: string, keyId = this.keyId): string {
    let key = this.tokenKeys.get(keyId)
    if (!key) {
      const vaultKey = this.keys.get(keyId)
      if (!vaultKey) throw new VaultError(`the task token was made with key ${keyId}, which this instance does not have (set TANDEM_SECRET_KEY or TANDEM_SECRET_KEY_PREVIOUS)`)
      key = createSecretKey(createHmac('sha256', vaultKey).update('tandem task token key').digest())
      this.tokenKeys.set(keyId, key)
    }
    return `tdt_${createHmac('sha256', key).update(`task token ${taskId}`).digest('base64url')}`
  }

  private readonly tokenKeys = new Map<string, KeyObject>()

  /** Decrypts with this vault's keys only (current and previous). */
  open(sealed: Sealed, aad: string): string {
    return open(this.keys, sealed, aad)
  }

  /**
   * A keyed fingerprint (HMAC-SHA256 under a key derived from the current one) of text that may hold a secret,
   * such as a request body kept to recognise a retry: unlike a plain hash, it cannot be brute-forced offline.
   */
  fingerprint(text: string): string {
    this.fingerprintKey ??= createHmac('sha256', this.keys.get(this.keyId) as KeyObject).update('tandem fingerprint key').digest()
    return createHmac('sha256', this.fingerprintKey).update(text).digest('hex')
  }

  private fingerprintKey: Buffer | undefined
}

/** Decrypts with any key a vault of this process opened. */
export function openWithRing(sealed: Sealed, aad: string): string {
  return open(ring, sealed, aad)
}

/** Ties `vault` to `db` and its transactions (done once, by buildApp): it travels with the database (src/db/context.ts). */
export function attachVault(db: Kysely<Database>, vault: Vault): void {
  dbContext(db).vault = vault
}

/** The vault attached to this database (or transaction of it). */
export function vaultOf(db: Kysely<Database>): Vault {
  const vault = dbContext(db).vault
  if (!vault) throw new Error('no vault is attached to this database (attachVault was not called)')
  return vault
}

const processKey = randomBytes(32)

function keyFileFor(databaseUrl: string): string {
  return join(dirname(databaseUrl.slice('sqlite:'.length)), 'secret.key')
}

// A key other users of the host can read is a key they hold: refuse to start until only its owner can.
function refuseSharedKeyFile(file: string): void {
  if (process.platform === 'win32') return
  const mode = statSync(file).mode & 0o777
  if ((mode & 0o077) !== 0) {
    throw new ConfigError('TANDEM_SECRET_KEY', `is not set and ${file} can be read by other users of this machine (mode ${mode.toString(8).padStart(4, '0')}); fix it with: chmod 600 ${file}`)
  }
}

// The first start writes the key ('wx': never over an existing file, so two starts racing keep one key).
function readOrCreateKeyFile(file: string): Buffer {
  try {
    writeFileSync(file, `${randomBytes(32).toString('base64')}\n`, { flag: 'wx', mode: 0o600 })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  }
  refuseSharedKeyFile(file)
  const text = readFileSync(file, 'utf8').trim()
  try {
    return parseSecretKey('secret.key', text)
  } catch {
    throw new ConfigError('TANDEM_SECRET_KEY', `is not set and ${file} does not hold a key (32 bytes in base64); restore it or set TANDEM_SECRET_KEY`)
  }
}

/** The vault of this configuration (see the top of this file for where its key comes from). */
export function openVault(config: Config): Vault {
  if (config.secretKey) return new Vault(config.secretKey, config.secretKeysPrevious)
  if (config.databaseUrl === 'sqlite::memory:') return new Vault(processKey, config.secretKeysPrevious)
  if (config.databaseUrl.startsWith('sqlite:')) return new Vault(readOrCreateKeyFile(keyFileFor(config.databaseUrl)), config.secretKeysPrevious)
  throw new ConfigError('TANDEM_SECRET_KEY', 'is required with PostgreSQL (every instance must share the key): set 32 random bytes in base64, e.g. openssl rand -base64 32')
}
