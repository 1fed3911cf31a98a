// The `data:` of each Server-Sent Event of a response body (the event stream format of the HTML standard, the
// parts vendors use): `onData` gets each event's data and may end the read by returning true.
export async function forEachEventData(body: ReadableStream<Uint8Array>, onData: (data: string) => boolean | void, maxBytes: number): Promise<'ended' | 'stopped' | 'too-large'> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader()
  let buffer = ''
  let data: string[] = []
  let size = 0
  const dispatch = () => {
    const payload = data.join('\n')
    data = []
    return payload !== '' && onData(payload) === true
  }
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.length
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined)
      return 'too-large'
    }
    buffer += value
    let newline: number
    while ((newline = buffer.search(/\r\n|\r|\n/)) !== -1) {
      const line = buffer.slice(0, newline)
      buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1))
      if (line === '') {
        if (dispatch()) {
          await reader.cancel().catch(() => undefined)
          return 'stopped'
        }
      } else if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5))
    }
  }
  return dispatch() ? 'stopped' : 'ended'
}
