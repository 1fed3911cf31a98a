// Server-made identifiers (UUIDv7: time-ordered, so they also order lists) and timestamps.
import { v7 } from 'uuid'

export const newId = (): string => v7()

export const now = (): string => new Date().toISOString()
