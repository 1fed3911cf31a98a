// Every bound of a tool call, in one place (docs/tools-and-approvals.md, "Tools", bounds); the input and output
// bytes are tested at the limit and one past it (test/mcp/tools.test.ts). The run engine's own (how much of a call
// the API lists, the answer to a question) are in src/runs/limits.ts.

/** Bytes of a tool's input as JSON; a larger one fails without reaching the tool. */
export const MAX_TOOL_INPUT_BYTES = 64 * 1024
/** Bytes of a tool's output given to the model; more is cut, with a marker. */
export const MAX_TOOL_OUTPUT_BYTES = 64 * 1024
/** Characters of a tool name offered to vendors that cannot hold a dot (Anthropic, Mistral). */
export const MAX_VENDOR_TOOL_NAME = 64
/** Messages `tandem.read_messages` reads at most. */
export const MAX_READ_MESSAGES = 50
/** Characters of the text `tandem.post_message` posts. */
export const MAX_POSTED_TEXT_LENGTH = 20000
/** Characters of the question `tandem.ask_operator` asks. */
export const MAX_QUESTION_LENGTH = 4000
