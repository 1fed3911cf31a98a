// Last line of defence against a blank page: a rendering error shows a message and a way back.
import { Component, type ReactNode } from 'react'

export class ErrorBoundary extends Component<{ children: ReactNode }, { error: Error | null }> {
  state = { error: null as Error | null }
  static getDerivedStateFromError(error: Error) {
    return { error }
  }
  render() {
    if (!this.state.error) return this.props.children
    return (
      <div role="alert" className="error">
        <h1>Something went wrong in the console</h1>
        <p>{this.state.error.message}</p>
        <p><a href="/">Back to the streams</a></p>
      </div>
    )
  }
}
