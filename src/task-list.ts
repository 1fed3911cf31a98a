// The task list of the job runners, both databases: every job the service runs, by name, with its handler.
// Declared here in one place (graphile-worker's taskList style); importing a feature registers nothing.
import type { TaskList } from './jobs/index.js'
import { runTasks } from './runs/machine/handlers.js'
import { webhookTasks } from './events/webhooks/delivery.js'
import { operatorTasks } from './triggers/jobs.js'
import { decisionTasks } from './waits/jobs.js'
import { callToolJob } from './runs/tool-calls/task.js'
import { cancelRemoteJob } from './a2a/cancel.js'
import { pushTasks } from './a2a/push-delivery.js'

export const taskList: TaskList = { ...runTasks, ...webhookTasks, ...operatorTasks, ...decisionTasks, ...pushTasks, 'tools.call': callToolJob, 'a2a.cancel': cancelRemoteJob }
