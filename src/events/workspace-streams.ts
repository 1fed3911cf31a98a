// For a feed that follows every stream of one workspace (the inbox feed, MCP notifications): whether a stream the
// hub woke is the workspace's. A stream of another workspace is remembered, so each is looked up once; the memory
// is bounded (forgotten, all at once, past MAX_OTHER_STREAMS).
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'

const MAX_OTHER_STREAMS = 10000

export class WorkspaceStreams {
  private readonly others = new Set<string>()

  private readonly db: Kysely<Database>
  private readonly workspaceId: string

  constructor(
    db: Kysely<Database>,
    workspaceId: string,
  ) {
    this.db = db
    this.workspaceId = workspaceId
  }

  /** Already known to be another workspace's: nothing to look up. */
  isOther(streamId: string): boolean {
    return this.others.has(streamId)
  }

  /** Looks the stream up: true when it is the workspace's; otherwise remembers it as another's. */
  async belongs(streamId: string): Promise<boolean> {
    if (this.others.has(streamId)) return false
    const row = await this.db.selectFrom('streams').select('workspace_id').where('id', '=', streamId).executeTakeFirst()
    if (row?.workspace_id === this.workspaceId) return true
    if (this.others.size >= MAX_OTHER_STREAMS) this.others.clear()
    this.others.add(streamId)
    return false
  }
}
