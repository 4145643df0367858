import { Component, type ErrorInfo, type ReactNode } from "react";

type ErrorBoundaryProps = { children: ReactNode; resetKey: string };
type ErrorBoundaryState = { error: Error | null; resetKey: string };

/** Keeps one view's render failure from blanking the whole app; navigating away resets it. */
export class ErrorBoundary extends Component<ErrorBoundaryProps, ErrorBoundaryState> {
  state: ErrorBoundaryState = { error: null, resetKey: this.props.resetKey };

  static getDerivedStateFromError(error: Error): Partial<ErrorBoundaryState> {
    return { error };
  }

  static getDerivedStateFromProps(props: ErrorBoundaryProps, state: ErrorBoundaryState) {
    return props.resetKey !== state.resetKey ? { error: null, resetKey: props.resetKey } : null;
  }

  componentDidCatch(error: Error, info: ErrorInfo) {
    console.error("view failed to render", error, info.componentStack);
  }

  render() {
    if (this.state.error) {
      return (
        <div className="notice notice-error" role="alert">
          This view failed to render: {this.state.error.message}. Reload the page, or go to another
          view.
        </div>
      );
    }
    return this.props.children;
  }
}
