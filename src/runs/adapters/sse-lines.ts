// The `data:` of each Server-Sent Event of a response body (the event stream format of the HTML standard, the
// parts vendors use): `onData` gets each event's data and may end the read by returning true.
export async function forEachEventData(body: AsyncIterable<Uint8Array>, onData: (data: string) => boolean | void, maxBytes: number): Promise<'ended' | 'stopped' | 'too-large'> {
  // A web ReadableStream or a Node stream (undici's request): leaving the loop early cancels or destroys it.
  const decoder = new TextDecoder()
  let buffer = ''
  let data: string[] = []
  let size = 0
  const dispatch = () => {
    const payload = data.join('\n')
    data = []
    return payload !== '' && onData(payload) === true
  }
  for await (const chunk of body) {
    size += chunk.byteLength
    if (size > maxBytes) return 'too-large'
    buffer += decoder.decode(chunk, { stream: true })
    let newline: number
    while ((newline = buffer.search(/\r\n|\r|\n/)) !== -1) {
      const line = buffer.slice(0, newline)
      buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1))
      if (line === '') {
        if (dispatch()) return 'stopped'
      } else if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5))
    }
  }
  return dispatch() ? 'stopped' : 'ended'
}
