"""Per language, through the real `moor` command: what moves an axis and what does not."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from tests.conftest import Workspace


@dataclass(frozen=True)
class Sample:
    path: str
    symbol: str
    base: str
    cosmetic: str  # re-indented, commented, blank lines, re-wrapped arguments
    body: str  # one body token changed
    signature: str  # a parameter added
    decorators: str | None  # a decorator / annotation / attribute / modifier added
    doc: str  # only the doc comment or docstring edited


PYTHON = Sample(
    path="src/net/client.py",
    symbol="Client.send",
    base='''
class Client:
    def send(self, data, retries=3):
        """Send data, retrying."""
        total = 0
        for attempt in range(retries):
            total += attempt
        return total + len(data)


class Server:
    def send(self, data):
        return data
''',
    cosmetic='''
class Client:
    # sending is idempotent


    def send(
        self,
        data,
        retries=3,
    ):
        """Send data, retrying."""

        total = 0  # running sum
        for attempt in range(retries):
              total += attempt
        return (total + len(data))


class Server:
    def send(self, data):
        return data
''',
    body='''
class Client:
    def send(self, data, retries=3):
        """Send data, retrying."""
        total = 1
        for attempt in range(retries):
            total += attempt
        return total + len(data)


class Server:
    def send(self, data):
        return data
''',
    signature='''
class Client:
    def send(self, data, retries=3, timeout=None):
        """Send data, retrying."""
        total = 0
        for attempt in range(retries):
            total += attempt
        return total + len(data)


class Server:
    def send(self, data):
        return data
''',
    decorators='''
class Client:
    @traced
    def send(self, data, retries=3):
        """Send data, retrying."""
        total = 0
        for attempt in range(retries):
            total += attempt
        return total + len(data)


class Server:
    def send(self, data):
        return data
''',
    doc='''
class Client:
    def send(self, data, retries=3):
        """Send the data, retrying on failure."""
        total = 0
        for attempt in range(retries):
            total += attempt
        return total + len(data)


class Server:
    def send(self, data):
        return data
''',
)

JAVASCRIPT = Sample(
    path="src/client.js",
    symbol="Client.send",
    base="""
class Client {
  /** Send data, retrying. */
  send(data, retries = 3) {
    let total = 0;
    for (let i = 0; i < retries; i++) { total += i; }
    return total + data.length;
  }
}
class Server {
  send(data) { return data; }
}
""",
    cosmetic="""
class Client {
  /** Send data, retrying. */
      send(
        data,
        retries = 3,
      ) {
    // running sum

    let total = 0;
    for (let i = 0; i < retries; i++) {
      total += i;
    }
    return total + data.length;
  }
}
class Server {
  send(data) { return data; }
}
""",
    body="""
class Client {
  /** Send data, retrying. */
  send(data, retries = 3) {
    let total = 1;
    for (let i = 0; i < retries; i++) { total += i; }
    return total + data.length;
  }
}
class Server {
  send(data) { return data; }
}
""",
    signature="""
class Client {
  /** Send data, retrying. */
  send(data, retries = 3, timeout = 0) {
    let total = 0;
    for (let i = 0; i < retries; i++) { total += i; }
    return total + data.length;
  }
}
class Server {
  send(data) { return data; }
}
""",
    decorators="""
class Client {
  /** Send data, retrying. */
  static send(data, retries = 3) {
    let total = 0;
    for (let i = 0; i < retries; i++) { total += i; }
    return total + data.length;
  }
}
class Server {
  send(data) { return data; }
}
""",
    doc="""
class Client {
  /** Send the data, retrying on failure. */
  send(data, retries = 3) {
    let total = 0;
    for (let i = 0; i < retries; i++) { total += i; }
    return total + data.length;
  }
}
class Server {
  send(data) { return data; }
}
""",
)

TYPESCRIPT = Sample(
    path="src/client.ts",
    symbol="Client.send",
    base="""
export class Client {
  /** Send data, retrying. */
  send(data: string, retries: number = 3): number {
    let total = 0;
    for (let i = 0; i < retries; i++) { total += i; }
    return total + data.length;
  }
}
export class Server {
  send(data: string): string { return data; }
}
""",
    cosmetic="""
export class Client {
  /** Send data, retrying. */
  send(
    data: string,
    retries: number = 3,
  ): number {
    // running sum
    let total = 0;

    for (let i = 0; i < retries; i++) {
        total += i;
    }
    return total + data.length;
  }
}
export class Server {
  send(data: string): string { return data; }
}
""",
    body="""
export class Client {
  /** Send data, retrying. */
  send(data: string, retries: number = 3): number {
    let total = 0;
    for (let i = 0; i < retries; i++) { total -= i; }
    return total + data.length;
  }
}
export class Server {
  send(data: string): string { return data; }
}
""",
    signature="""
export class Client {
  /** Send data, retrying. */
  send(data: string, retries: number = 3, timeout?: number): number {
    let total = 0;
    for (let i = 0; i < retries; i++) { total += i; }
    return total + data.length;
  }
}
export class Server {
  send(data: string): string { return data; }
}
""",
    decorators="""
export class Client {
  /** Send data, retrying. */
  @traced
  send(data: string, retries: number = 3): number {
    let total = 0;
    for (let i = 0; i < retries; i++) { total += i; }
    return total + data.length;
  }
}
export class Server {
  send(data: string): string { return data; }
}
""",
    doc="""
export class Client {
  /** Send the data, retrying on failure. */
  send(data: string, retries: number = 3): number {
    let total = 0;
    for (let i = 0; i < retries; i++) { total += i; }
    return total + data.length;
  }
}
export class Server {
  send(data: string): string { return data; }
}
""",
)

GO = Sample(
    path="net/client.go",
    symbol="Client.Send",
    base="""
package net

type Client struct{}
type Server struct{}

// Send sends data, retrying.
func (c *Client) Send(data []byte, retries int) int {
	total := 0
	for i := 0; i < retries; i++ {
		total += i
	}
	return total + len(data)
}

func (s *Server) Send(data []byte) []byte { return data }
""",
    cosmetic="""
package net

type Client struct{}
type Server struct{}

// Send sends data, retrying.
func (c *Client) Send(
	data []byte,
	retries int,
) int {
	// running sum

	total := 0
	for i := 0; i < retries; i++ { total += i }
	return total + len(data)
}

func (s *Server) Send(data []byte) []byte { return data }
""",
    body="""
package net

type Client struct{}
type Server struct{}

// Send sends data, retrying.
func (c *Client) Send(data []byte, retries int) int {
	total := 0
	for i := 0; i <= retries; i++ {
		total += i
	}
	return total + len(data)
}

func (s *Server) Send(data []byte) []byte { return data }
""",
    signature="""
package net

type Client struct{}
type Server struct{}

// Send sends data, retrying.
func (c *Client) Send(data []byte, retries int, timeout int) int {
	total := 0
	for i := 0; i < retries; i++ {
		total += i
	}
	return total + len(data)
}

func (s *Server) Send(data []byte) []byte { return data }
""",
    decorators=None,  # Go has no decorators, annotations or attributes
    doc="""
package net

type Client struct{}
type Server struct{}

// Send sends the data, retrying on failure.
func (c *Client) Send(data []byte, retries int) int {
	total := 0
	for i := 0; i < retries; i++ {
		total += i
	}
	return total + len(data)
}

func (s *Server) Send(data []byte) []byte { return data }
""",
)

RUST = Sample(
    path="src/client.rs",
    symbol="Client.send",
    base="""
struct Client;
struct Server;

impl Client {
    /// Send data, retrying.
    fn send(&self, data: &[u8], retries: u32) -> u32 {
        let mut total = 0;
        for i in 0..retries { total += i; }
        total + data.len() as u32
    }
}

impl Server {
    fn send(&self, data: &[u8]) -> usize { data.len() }
}
""",
    cosmetic="""
struct Client;
struct Server;

impl Client {
    /// Send data, retrying.
    fn send(
        &self,
        data: &[u8],
        retries: u32,
    ) -> u32 {
        // running sum

        let mut total = 0;
        for i in 0..retries {
            total += i;
        }
        total + data.len() as u32
    }
}

impl Server {
    fn send(&self, data: &[u8]) -> usize { data.len() }
}
""",
    body="""
struct Client;
struct Server;

impl Client {
    /// Send data, retrying.
    fn send(&self, data: &[u8], retries: u32) -> u32 {
        let mut total = 0;
        for i in 1..retries { total += i; }
        total + data.len() as u32
    }
}

impl Server {
    fn send(&self, data: &[u8]) -> usize { data.len() }
}
""",
    signature="""
struct Client;
struct Server;

impl Client {
    /// Send data, retrying.
    fn send(&self, data: &[u8], retries: u32, timeout: u64) -> u32 {
        let mut total = 0;
        for i in 0..retries { total += i; }
        total + data.len() as u32
    }
}

impl Server {
    fn send(&self, data: &[u8]) -> usize { data.len() }
}
""",
    decorators="""
struct Client;
struct Server;

impl Client {
    /// Send data, retrying.
    #[inline]
    fn send(&self, data: &[u8], retries: u32) -> u32 {
        let mut total = 0;
        for i in 0..retries { total += i; }
        total + data.len() as u32
    }
}

impl Server {
    fn send(&self, data: &[u8]) -> usize { data.len() }
}
""",
    doc="""
struct Client;
struct Server;

impl Client {
    /// Send the data, retrying on failure.
    fn send(&self, data: &[u8], retries: u32) -> u32 {
        let mut total = 0;
        for i in 0..retries { total += i; }
        total + data.len() as u32
    }
}

impl Server {
    fn send(&self, data: &[u8]) -> usize { data.len() }
}
""",
)

JAVA = Sample(
    path="src/Client.java",
    symbol="Client.send",
    base="""
class Client {
    /** Send data, retrying. */
    int send(byte[] data, int retries) {
        int total = 0;
        for (int i = 0; i < retries; i++) { total += i; }
        return total + data.length;
    }
}

class Server {
    byte[] send(byte[] data) { return data; }
}
""",
    cosmetic="""
class Client {
    /** Send data, retrying. */
    int send(
            byte[] data,
            int retries) {
        // running sum

        int total = 0;
        for (int i = 0; i < retries; i++) {
            total += i;
        }
        return total + data.length;
    }
}

class Server {
    byte[] send(byte[] data) { return data; }
}
""",
    body="""
class Client {
    /** Send data, retrying. */
    int send(byte[] data, int retries) {
        int total = 0;
        for (int i = 0; i < retries; i++) { total += 2 * i; }
        return total + data.length;
    }
}

class Server {
    byte[] send(byte[] data) { return data; }
}
""",
    signature="""
class Client {
    /** Send data, retrying. */
    int send(byte[] data, int retries, long timeout) {
        int total = 0;
        for (int i = 0; i < retries; i++) { total += i; }
        return total + data.length;
    }
}

class Server {
    byte[] send(byte[] data) { return data; }
}
""",
    decorators="""
class Client {
    /** Send data, retrying. */
    @Deprecated
    int send(byte[] data, int retries) {
        int total = 0;
        for (int i = 0; i < retries; i++) { total += i; }
        return total + data.length;
    }
}

class Server {
    byte[] send(byte[] data) { return data; }
}
""",
    doc="""
class Client {
    /** Send the data, retrying on failure. */
    int send(byte[] data, int retries) {
        int total = 0;
        for (int i = 0; i < retries; i++) { total += i; }
        return total + data.length;
    }
}

class Server {
    byte[] send(byte[] data) { return data; }
}
""",
)

TSX = Sample(
    path="src/view.tsx",
    symbol="View.render",
    base="""
export class View {
  /** Draw the view. */
  render(name: string): JSX.Element {
    const label = name.toUpperCase();
    return <div className="view">{label}</div>;
  }
}
""",
    cosmetic="""
export class View {
  /** Draw the view. */
  render(
    name: string,
  ): JSX.Element {
    // shout the name
    const label = name.toUpperCase();

    return <div className="view">{label}</div>;
  }
}
""",
    body="""
export class View {
  /** Draw the view. */
  render(name: string): JSX.Element {
    const label = name.toLowerCase();
    return <div className="view">{label}</div>;
  }
}
""",
    signature="""
export class View {
  /** Draw the view. */
  render(name: string, size: number): JSX.Element {
    const label = name.toUpperCase();
    return <div className="view">{label}</div>;
  }
}
""",
    decorators="""
export class View {
  /** Draw the view. */
  @memo
  render(name: string): JSX.Element {
    const label = name.toUpperCase();
    return <div className="view">{label}</div>;
  }
}
""",
    doc="""
export class View {
  /** Draw the whole view. */
  render(name: string): JSX.Element {
    const label = name.toUpperCase();
    return <div className="view">{label}</div>;
  }
}
""",
)

SAMPLES = {
    "python": PYTHON,
    "javascript": JAVASCRIPT,
    "typescript": TYPESCRIPT,
    "tsx": TSX,
    "go": GO,
    "rust": RUST,
    "java": JAVA,
}


def bound(ws: Workspace, sample: Sample, watch: list[str] | None = None) -> str:
    ws.write(sample.path, sample.base)
    ws.memory("note", f"{sample.path}#{sample.symbol}", watch=watch)
    ws.moor("bind", check=True)
    assert ws.state("memories/note.md") == "current"
    return "memories/note.md"


@pytest.mark.parametrize("language", SAMPLES)
def test_cosmetic_changes_keep_a_bound_method_current_and_a_token_change_drifts_it(
    ws: Workspace, language: str
) -> None:
    sample = SAMPLES[language]
    memory = bound(ws, sample)
    ws.write(sample.path, sample.cosmetic)
    assert ws.state(memory) == "current"
    run = ws.moor("check")
    assert run.code == 0, run.out + run.err
    # Positive control: the same workspace does report drift when the code really changes.
    ws.write(sample.path, sample.body)
    assert ws.state(memory) == "drifted"
    assert ws.moor("check").code == 1


@pytest.mark.parametrize("language", SAMPLES)
def test_a_changed_body_token_drifts_on_body_alone(ws: Workspace, language: str) -> None:
    sample = SAMPLES[language]
    memory = bound(ws, sample)
    ws.write(sample.path, sample.body)
    anchor = ws.anchor(memory)
    assert anchor["state"] == "drifted"
    assert anchor["axes"] == ["body"]


@pytest.mark.parametrize("language", SAMPLES)
def test_an_added_parameter_drifts_on_signature(ws: Workspace, language: str) -> None:
    sample = SAMPLES[language]
    memory = bound(ws, sample)
    ws.write(sample.path, sample.signature)
    anchor = ws.anchor(memory)
    assert anchor["state"] == "drifted"
    assert "signature" in anchor["axes"]
    assert "decorators" not in anchor["axes"]


@pytest.mark.parametrize("language", [lang for lang, s in SAMPLES.items() if s.decorators])
def test_an_added_decorator_or_modifier_drifts_on_decorators(ws: Workspace, language: str) -> None:
    sample = SAMPLES[language]
    assert sample.decorators is not None
    memory = bound(ws, sample)
    ws.write(sample.path, sample.decorators)
    anchor = ws.anchor(memory)
    assert anchor["state"] == "drifted"
    assert anchor["axes"] == ["decorators"]


@pytest.mark.parametrize("language", SAMPLES)
def test_a_doc_only_edit_is_current_by_default_and_drifted_when_doc_is_watched(
    ws: Workspace, language: str
) -> None:
    sample = SAMPLES[language]
    ws.write(sample.path, sample.base)
    ws.memory("default", f"{sample.path}#{sample.symbol}")
    ws.memory("doc", f"{sample.path}#{sample.symbol}", watch=["doc"])
    ws.moor("bind", check=True)
    ws.write(sample.path, sample.doc)
    states = ws.states()
    assert states["memories/default.md"]["state"] == "current"
    assert states["memories/doc.md"]["state"] == "drifted"


@pytest.mark.parametrize("language", ["python", "javascript", "go", "rust", "java"])
def test_same_named_methods_in_different_classes_resolve_independently(
    ws: Workspace, language: str
) -> None:
    sample = SAMPLES[language]
    other = sample.symbol.replace("Client", "Server")
    ws.write(sample.path, sample.base)
    ws.memory("client", f"{sample.path}#{sample.symbol}")
    ws.memory("server", f"{sample.path}#{other}")
    ws.moor("bind", check=True)
    ws.write(sample.path, sample.body)
    states = ws.states()
    assert states["memories/client.md"]["state"] == "drifted"
    assert states["memories/server.md"]["state"] == "current"
