// A stream's Automation tab: its schedules, message triggers and inbound hooks (Automation.tsx), told which
// trigger names the stream's saved cycles have so that an item naming none reads "No matching cycle".
import { useQuery } from '@tanstack/react-query'
import { api, unwrap } from '../api/client'
import { allPages } from '../pages'
import { AutomationPanel } from './Automation'

export function AutomationTab({ streamId }: { streamId: string }) {
  const cycles = useQuery({
    queryKey: ['cycles', streamId],
    queryFn: () => allPages((cursor) => unwrap(api.GET('/api/cycles/streams/{streamId}/cycles', { params: { path: { streamId }, query: { limit: 100, ...(cursor ? { cursor } : {}) } } }))),
  })
  // Until the cycles are read, no item is called unmatched.
  const names = cycles.data ? [...new Set(cycles.data.map((c) => c.triggerName))] : null
  return names ? <AutomationPanel streamId={streamId} triggerNames={names} /> : null
}
