// The agent_id label of the decision metrics is bounded: the first TANDEM_METRICS_AGENT_LABELS agents keep their
// id, the next is `_other`; an agent already seen keeps its label.
import { it } from 'node:test'
import assert from 'node:assert/strict'
import { agentLabels } from '../../src/insights/metrics.js'

it('keeps at most the limit of agent ids as labels, then _other', () => {
  const label = agentLabels(2)
  assert.equal(label('a'), 'a')
  assert.equal(label('b'), 'b')
  assert.equal(label('c'), '_other', 'one past the bound')
  assert.equal(label('a'), 'a')
})
