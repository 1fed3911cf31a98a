// Tool names for vendors whose names cannot hold a dot (Anthropic and Mistral accept `^[a-zA-Z0-9_-]{1,64}$`):
// `<server>.<tool>` is offered as `<server>__<tool>`, any other character as `_`, and a name past 64 characters
// is cut and given a digest of the whole, so it stays unique. The map built here turns the vendor's name back.
import { createHash } from 'node:crypto'
import type { ToolDefinition } from './definitions.js'
import { MAX_VENDOR_TOOL_NAME } from './limits.js'

export function vendorToolName(name: string): string {
  const dot = name.indexOf('.')
  const joined = (dot < 0 ? name : `${name.slice(0, dot)}__${name.slice(dot + 1)}`).replace(/[^A-Za-z0-9_-]/g, '_')
  if (joined.length <= MAX_VENDOR_TOOL_NAME) return joined
  const digest = createHash('sha256').update(name).digest('hex').slice(0, 8)
  return `${joined.slice(0, MAX_VENDOR_TOOL_NAME - 9)}_${digest}`
}

export interface VendorToolNames {
  /** The vendor-safe name of each tool offered, in order. */
  offered: { vendorName: string; tool: ToolDefinition }[]
  /** The tool a vendor's name stands for; undefined for a name Tandem never offered. */
  toolOf(vendorName: string): ToolDefinition | undefined
  /** Tools left out because their vendor name collides with an earlier one's. */
  warnings: string[]
}

export function vendorToolNames(tools: readonly ToolDefinition[]): VendorToolNames {
  const byVendorName = new Map<string, ToolDefinition>()
  const warnings: string[] = []
  for (const tool of tools) {
    const vendorName = vendorToolName(tool.name)
    const taken = byVendorName.get(vendorName)
    if (taken) warnings.push(`The tool ${tool.name} was not offered: its name for the model, ${vendorName}, is already that of ${taken.name}.`)
    else byVendorName.set(vendorName, tool)
  }
  return {
    offered: [...byVendorName].map(([vendorName, tool]) => ({ vendorName, tool })),
    toolOf: (vendorName) => byVendorName.get(vendorName),
    warnings,
  }
}
