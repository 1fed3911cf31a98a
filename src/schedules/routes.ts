// /api schedules (docs/operators.md "Schedules"): members and admins create, list, read, change and delete the
// schedules of a stream. Every write re-arms the schedule's job in its own transaction.
import { noCycleWarnings, WithWarnings } from '../triggers/no-cycle.js'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import Type from 'typebox'
import { IdParams, Page, PageQuery, ProblemResponses } from '../http/schemas.js'
import { decodeCursor, toPage } from '../http/pagination.js'
import { notFound, type FieldError } from '../http/problem.js'
import { newId, now } from '../ids.js'
import { StreamIdParams } from '../streams/schemas.js'
import { requireStream } from '../streams/store.js'
import { inputTooLarge, invalid, requireRoomOnStream } from '../triggers/schemas.js'
import { canonicalTimezone, checkCron } from './cron.js'
import { armSchedule, disarmSchedule, nextRunAfter } from './firing.js'
import { requireRoomForEnabled } from './rate.js'
import { CreateScheduleBody, Schedule, UpdateScheduleBody } from './schemas.js'
import { findScheduleRow, listScheduleRows, lockScheduleRow, toSchedule, type ScheduleRow } from './store.js'

/** Checks cron, time zone and input together, so that one 400 names every bad field. */
function checkSchedule(fields: { cron: string; timezone: string; input: unknown }): { timezone: string } {
  const errors: FieldError[] = []
  const timezone = canonicalTimezone(fields.timezone)
  if (timezone === null) errors.push({ pointer: '/timezone', detail: `is not an IANA time zone name (e.g. Europe/Paris, America/New_York, UTC); got "${fields.timezone}"` })
  const cron = checkCron(fields.cron, timezone ?? 'UTC')
  if ('pointer' in cron) errors.push(cron)
  const tooLarge = inputTooLarge(fields.input, '/input')
  if (tooLarge) errors.push(tooLarge)
  if (errors.length > 0) throw invalid(errors)
  return { timezone: timezone as string }
}

export const scheduleRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.database

  app.post(
    '/streams/:streamId/schedules',
    {
      config: { idempotent: true },
      schema: {
        operationId: 'createSchedule',
        tags: ['schedules'],
        summary: 'Schedule a stream trigger (cron in an IANA time zone)',
        description: 'Each tick fires the trigger once, across instances and restarts; ticks missed while no instance ran fire once, at start-up, as the latest missed tick. Answers `warnings` (`no-matching-cycle`) when no saved cycle of the stream has the trigger name (it is saved all the same).',
        params: StreamIdParams,
        body: CreateScheduleBody,
        response: { 201: WithWarnings(Schedule, 'CreatedSchedule'), ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const { workspaceId, principalId } = request.principal
      const body = request.body
      const input = body.input ?? {}
      const { timezone } = checkSchedule({ cron: body.cron, timezone: body.timezone ?? 'UTC', input })
      const schedule = await reply.withTransaction(async (trx) => {
        const stream = await requireStream(trx, workspaceId, request.params.streamId)
        await requireRoomOnStream(trx, 'schedules', stream.id, 'schedules')
        const at = now()
        const enabled = body.enabled ?? true
        if (enabled) await requireRoomForEnabled(trx, workspaceId, app.config.operators.maxEnabledSchedules)
        const row: ScheduleRow = {
          id: newId(), workspace_id: workspaceId, stream_id: stream.id, trigger_name: body.triggerName, cron: body.cron.trim(), timezone,
          input: JSON.stringify(input), enabled: enabled ? 1 : 0, next_run_at: enabled ? nextRunAfter({ cron: body.cron, timezone }, new Date()) : null,
          last_run_at: null, created_by: principalId, created_at: at, updated_at: at,
        }
        await trx.insertInto('schedules').values(row).execute()
        await armSchedule(trx, row)
        return { ...toSchedule(row), ...(await noCycleWarnings(trx, workspaceId, stream.id, body.triggerName)) }
      })
      return reply.code(201).header('location', `/api/schedules/${schedule.id}`).send(schedule)
    },
  )

  app.get(
    '/streams/:streamId/schedules',
    {
      schema: {
        operationId: 'listSchedules', tags: ['schedules'], summary: 'List the schedules of a stream, oldest first',
        params: StreamIdParams, querystring: PageQuery, response: { 200: Page(Schedule), ...ProblemResponses },
      },
    },
    async (request) => {
      const { workspaceId } = request.principal
      const stream = await requireStream(db, workspaceId, request.params.streamId)
      const limit = request.query.limit ?? 50
      const rows = await listScheduleRows(db, workspaceId, stream.id, limit + 1, decodeCursor(request.query.cursor))
      return toPage(rows.map(toSchedule), limit)
    },
  )

  app.get(
    '/schedules/:id',
    { schema: { operationId: 'getSchedule', tags: ['schedules'], summary: 'Read a schedule', params: IdParams, response: { 200: Schedule, ...ProblemResponses } } },
    async (request) => {
      const row = await findScheduleRow(db, request.principal.workspaceId, request.params.id.toLowerCase())
      if (!row) throw notFound('Schedule')
      return toSchedule(row)
    },
  )

  app.patch(
    '/schedules/:id',
    {
      schema: {
        operationId: 'updateSchedule', tags: ['schedules'], summary: 'Change a schedule',
        description: 'A new cron, time zone or `enabled: true` computes `nextRunAt` from now; `enabled: false` drops the pending tick.',
        params: IdParams, body: UpdateScheduleBody, response: { 200: Schedule, ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const { workspaceId } = request.principal
      const id = request.params.id.toLowerCase()
      const body = request.body
      return reply.withTransaction(async (trx) => {
        const row = await lockScheduleRow(trx, workspaceId, id)
        if (!row) throw notFound('Schedule')
        const cron = body.cron?.trim() ?? row.cron
        const input = body.input ?? (JSON.parse(row.input) as Record<string, unknown>)
        const { timezone } = checkSchedule({ cron, timezone: body.timezone ?? row.timezone, input })
        const enabled = body.enabled ?? Number(row.enabled) === 1
        if (enabled && Number(row.enabled) !== 1) await requireRoomForEnabled(trx, workspaceId, app.config.operators.maxEnabledSchedules, row.id)
        const retime = cron !== row.cron || timezone !== row.timezone || enabled !== (Number(row.enabled) === 1)
        const next = !enabled ? null : retime ? nextRunAfter({ cron, timezone }, new Date()) : row.next_run_at
        const updated: ScheduleRow = {
          ...row, trigger_name: body.triggerName ?? row.trigger_name, cron, timezone, input: JSON.stringify(input), enabled: enabled ? 1 : 0, next_run_at: next, updated_at: now(),
        }
        await trx.updateTable('schedules').set(updated).where('id', '=', id).execute()
        if (next !== row.next_run_at) {
          await disarmSchedule(trx, row)
          await armSchedule(trx, updated)
        }
        return toSchedule(updated)
      })
    },
  )

  app.delete(
    '/schedules/:id',
    { schema: { operationId: 'deleteSchedule', tags: ['schedules'], summary: 'Delete a schedule', params: IdParams, response: { 204: Type.Null(), ...ProblemResponses } } },
    async (request, reply) => {
      const { workspaceId } = request.principal
      await reply.withTransaction(async (trx) => {
        const row = await findScheduleRow(trx, workspaceId, request.params.id.toLowerCase())
        if (!row) throw notFound('Schedule')
        await trx.deleteFrom('schedules').where('id', '=', row.id).execute()
        await disarmSchedule(trx, row)
      })
      return reply.code(204).send(null)
    },
  )
}
