// A safe YAML subset for workflow definitions (spec §8), with no dependency: block mappings and
// sequences (including indentless sequences), flow mappings and sequences, plain, single- and
// double-quoted scalars, literal and folded block scalars, comments, YAML 1.2 core-schema
// scalars. Refused, as the spec requires: duplicate keys (SR401), anchors and aliases (SR402).
// Anything outside the subset (tags, multi-document streams, complex keys) is SR400: a workflow
// definition never needs it.

export class YamlError extends Error {
  constructor(code, message, line) {
    super(message);
    this.code = code;
    this.line = line;
  }
}

const NULLS = new Set(["", "~", "null", "Null", "NULL"]);
const TRUES = new Set(["true", "True", "TRUE"]);
const FALSES = new Set(["false", "False", "FALSE"]);

/** YAML 1.2 core schema resolution of a plain scalar. */
export function resolvePlain(s) {
  if (NULLS.has(s)) return null;
  if (TRUES.has(s)) return true;
  if (FALSES.has(s)) return false;
  if (/^[-+]?[0-9]+$/.test(s)) return Number(s);
  if (/^0o[0-7]+$/.test(s)) return parseInt(s.slice(2), 8);
  if (/^0x[0-9a-fA-F]+$/.test(s)) return parseInt(s.slice(2), 16);
  if (/^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/.test(s)) return Number(s);
  if (/^[-+]?\.(inf|Inf|INF)$/.test(s)) return s.startsWith("-") ? -Infinity : Infinity;
  if (/^\.(nan|NaN|NAN)$/.test(s)) return NaN;
  return s;
}

function setKey(obj, key, value, line) {
  const k = String(key);
  if (Object.prototype.hasOwnProperty.call(obj, k)) {
    throw new YamlError("SR401", `duplicate key ${JSON.stringify(k)}`, line);
  }
  Object.defineProperty(obj, k, { value, enumerable: true, writable: true, configurable: true });
}

/** Remove a trailing comment (a # preceded by whitespace, outside quotes). */
function stripComment(s) {
  let quote = null;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (quote) {
      if (quote === '"' && c === "\\") { i++; continue; }
      if (c === quote) {
        if (quote === "'" && s[i + 1] === "'") { i++; continue; }
        quote = null;
      }
      continue;
    }
    if ((c === '"' || c === "'") && (i === 0 || /[\s\[{,:-]/.test(s[i - 1]))) { quote = c; continue; }
    if (c === "#" && (i === 0 || /\s/.test(s[i - 1]))) return s.slice(0, i).replace(/\s+$/, "");
  }
  return s.replace(/\s+$/, "");
}

function unescapeDouble(body, line) {
  const simple = { "0": "\0", a: "\x07", b: "\b", t: "\t", "\t": "\t", n: "\n", v: "\v", f: "\f", r: "\r",
                   e: "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\", N: "\x85", _: "\xa0", L: "\u2028", P: "\u2029" };
  let out = "";
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c !== "\\") { out += c; continue; }
    const e = body[++i];
    if (e in simple) { out += simple[e]; continue; }
    const width = { x: 2, u: 4, U: 8 }[e];
    if (!width) throw new YamlError("SR400", `invalid escape \\${e}`, line);
    const hex = body.slice(i + 1, i + 1 + width);
    if (!new RegExp(`^[0-9a-fA-F]{${width}}$`).test(hex)) throw new YamlError("SR400", "invalid escape", line);
    out += String.fromCodePoint(parseInt(hex, 16));
    i += width;
  }
  return out;
}

/** Read a quoted scalar starting at s[0]; returns [value, rest]. */
function readQuoted(s, line) {
  const q = s[0];
  let i = 1;
  let body = "";
  for (; i < s.length; i++) {
    const c = s[i];
    if (q === '"' && c === "\\") { body += c + (s[i + 1] ?? ""); i++; continue; }
    if (c === q) {
      if (q === "'" && s[i + 1] === "'") { body += "'"; i++; continue; }
      const value = q === '"' ? unescapeDouble(body, line) : body;
      return [value, s.slice(i + 1)];
    }
    body += c;
  }
  throw new YamlError("SR400", "unterminated quoted scalar", line);
}

function refuseNode(s, line) {
  if (s.startsWith("&")) throw new YamlError("SR402", "anchors are not allowed", line);
  if (s.startsWith("*")) throw new YamlError("SR402", "aliases are not allowed", line);
  if (s.startsWith("!")) throw new YamlError("SR400", "tags are not supported", line);
  if (s.startsWith("? ") || s === "?") throw new YamlError("SR400", "complex keys are not supported", line);
  if (/^[@`%]/.test(s)) throw new YamlError("SR400", `a plain scalar cannot start with ${s[0]}`, line);
}

/** Parse a flow collection or scalar from text (which may span several lines). */
function parseFlow(text, line) {
  let i = 0;
  const ws = () => { while (i < text.length && /\s/.test(text[i])) i++; };
  function node(inFlow) {
    ws();
    const c = text[i];
    if (c === undefined) throw new YamlError("SR400", "unexpected end of a flow collection", line);
    refuseNode(text.slice(i), line);
    if (c === "[") {
      i++;
      const out = [];
      for (;;) {
        ws();
        if (text[i] === "]") { i++; return out; }
        out.push(node(true));
        ws();
        if (text[i] === ",") { i++; continue; }
        if (text[i] === "]") { i++; return out; }
        throw new YamlError("SR400", "expected , or ] in a flow sequence", line);
      }
    }
    if (c === "{") {
      i++;
      const out = {};
      for (;;) {
        ws();
        if (text[i] === "}") { i++; return out; }
        const key = node(true);
        ws();
        let value = null;
        if (text[i] === ":") { i++; value = node(true); ws(); }
        if (key !== null && typeof key === "object") throw new YamlError("SR400", "complex keys are not supported", line);
        setKey(out, key, value, line);
        if (text[i] === ",") { i++; continue; }
        if (text[i] === "}") { i++; return out; }
        throw new YamlError("SR400", "expected , or } in a flow mapping", line);
      }
    }
    if (c === '"' || c === "'") {
      const [v, rest] = readQuoted(text.slice(i), line);
      i = text.length - rest.length;
      return v;
    }
    // plain scalar: up to a flow indicator (in flow context) or ": " / end
    let j = i;
    while (j < text.length) {
      const d = text[j];
      if (inFlow && (d === "," || d === "]" || d === "}")) break;
      if (d === ":" && (j + 1 >= text.length || /[\s,\]}]/.test(text[j + 1]))) break;
      j++;
    }
    const raw = text.slice(i, j).replace(/\s+/g, " ").trim();
    i = j;
    return resolvePlain(raw);
  }
  const v = node(false);
  ws();
  if (i < text.length) throw new YamlError("SR400", `unexpected ${JSON.stringify(text.slice(i, i + 10))}`, line);
  return v;
}

function bracketBalance(s) {
  let depth = 0;
  let quote = null;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (quote) {
      if (quote === '"' && c === "\\") { i++; continue; }
      if (c === quote) quote = null;
      continue;
    }
    if (c === '"' || c === "'") quote = c;
    else if (c === "[" || c === "{") depth++;
    else if (c === "]" || c === "}") depth--;
  }
  return depth;
}

export function parseYaml(source) {
  if (source.includes("\t") && /^\t/m.test(source)) {
    throw new YamlError("SR400", "tabs are not allowed for indentation", null);
  }
  const raw = source.replace(/\r\n?/g, "\n").split("\n");
  // lines: {indent, text (comment stripped), raw, no}
  const lines = raw.map((r, k) => {
    const indent = r.length - r.replace(/^ +/, "").length;
    return { indent, text: stripComment(r.slice(indent)), raw: r, no: k + 1 };
  });
  let pos = 0;
  const blank = (l) => l.text === "";
  const isMarker = (l) => l.indent === 0 && /^(---|\.\.\.)(\s|$)/.test(l.text);
  const skipBlank = () => { while (pos < lines.length && blank(lines[pos])) pos++; };
  const docStart = () => {
    skipBlank();
    if (pos < lines.length && /^---(\s|$)/.test(lines[pos].text) && lines[pos].indent === 0) {
      const rest = lines[pos].text.slice(3).trim();
      if (rest) throw new YamlError("SR400", "content after --- is not supported", lines[pos].no);
      pos++;
    }
  };

  function blockScalar(header, parentIndent, no) {
    const m = /^([|>])([-+]?)([1-9]?)([-+]?)$/.exec(header);
    if (!m) throw new YamlError("SR400", `invalid block scalar header ${header}`, no);
    const style = m[1];
    const chomp = m[2] || m[4];
    const body = [];
    let contentIndent = m[3] ? parentIndent + Number(m[3]) : null;
    while (pos < lines.length) {
      const l = lines[pos];
      const isBlank = l.raw.trim() === "";
      if (!isBlank) {
        if (contentIndent === null) contentIndent = l.indent;
        if (l.indent < contentIndent || l.indent <= parentIndent) break;
      }
      body.push(isBlank ? "" : l.raw.slice(contentIndent));
      pos++;
    }
    let trailing = 0;
    while (body.length && body[body.length - 1] === "") { body.pop(); trailing++; }
    let text;
    if (style === "|") text = body.join("\n");
    else {
      text = "";
      for (let k = 0; k < body.length; k++) {
        const cur = body[k];
        if (k === 0) { text = cur; continue; }
        const prev = body[k - 1];
        const more = (s) => s.startsWith(" ") || s.startsWith("\t");
        if (cur === "") text += "\n";
        else if (prev === "" || more(cur) || more(prev)) text += (prev === "" ? "" : "\n") + cur;
        else text += " " + cur;
      }
    }
    if (body.length === 0) return chomp === "+" ? "\n".repeat(trailing) : "";
    if (chomp === "-") return text;
    if (chomp === "+") return text + "\n" + "\n".repeat(trailing);
    return text + "\n";
  }

  /** A value written after "key:" or "- " on line `l` (rest is the text after the indicator). */
  function inlineValue(rest, parentIndent, l) {
    if (rest === "") {
      skipBlank();
      if (pos < lines.length && lines[pos].indent > parentIndent) return block(lines[pos].indent);
      if (pos < lines.length && lines[pos].indent === parentIndent && /^-( |$)/.test(lines[pos].text)) {
        return sequence(parentIndent); // indentless sequence
      }
      return null;
    }
    refuseNode(rest, l.no);
    if (rest[0] === "|" || rest[0] === ">") return blockScalar(rest, parentIndent, l.no);
    if (rest[0] === "[" || rest[0] === "{") {
      let text = rest;
      while (bracketBalance(text) > 0) {
        if (pos >= lines.length) throw new YamlError("SR400", "unterminated flow collection", l.no);
        text += " " + lines[pos].text;
        pos++;
      }
      return parseFlow(text, l.no);
    }
    if (rest[0] === '"' || rest[0] === "'") {
      const [v, after] = readQuoted(rest, l.no);
      if (after.trim()) throw new YamlError("SR400", "text after a quoted scalar", l.no);
      return v;
    }
    // plain scalar, possibly continued on more-indented lines
    let text = rest;
    while (pos < lines.length && !blank(lines[pos]) && lines[pos].indent > parentIndent) {
      if (/:( |$)/.test(lines[pos].text) && !lines[pos].text.startsWith("#")) {
        throw new YamlError("SR400", "mapping values are not allowed here", lines[pos].no);
      }
      text += " " + lines[pos].text;
      pos++;
    }
    if (/: /.test(text)) throw new YamlError("SR400", "mapping values are not allowed here", l.no);
    return resolvePlain(text.trim());
  }

  function splitKey(text, no) {
    let key;
    let rest;
    if (text[0] === '"' || text[0] === "'") {
      [key, rest] = readQuoted(text, no);
      if (!/^\s*:( |$)/.test(rest)) throw new YamlError("SR400", "expected : after a quoted key", no);
      rest = rest.replace(/^\s*:/, "");
    } else {
      const m = /^(.*?):( |$)/.exec(text);
      if (!m) return null;
      refuseNode(text, no);
      if (/^[\[{]/.test(text)) throw new YamlError("SR400", "flow keys are not supported", no);
      key = resolvePlain(m[1].trim());
      rest = text.slice(m[0].length);
    }
    return [key, rest.trim()];
  }

  function looksLikeKey(text, no) {
    if (text[0] === '"' || text[0] === "'") {
      const [, rest] = readQuoted(text, no);
      return /^\s*:( |$)/.test(rest);
    }
    if (/^[\[{]/.test(text)) return false;
    return /^(.*?):( |$)/.test(text);
  }

  function mapping(indent) {
    const out = {};
    while (pos < lines.length) {
      skipBlank();
      if (pos >= lines.length) break;
      const l = lines[pos];
      if (l.indent < indent || isMarker(l)) break;
      if (l.indent > indent) throw new YamlError("SR400", "bad indentation of a mapping entry", l.no);
      if (/^-( |$)/.test(l.text)) break; // an indentless sequence belongs to the caller
      const kv = splitKey(l.text, l.no);
      if (!kv) throw new YamlError("SR400", "expected `key: value`", l.no);
      pos++;
      const [key, rest] = kv;
      if (key !== null && typeof key === "object") throw new YamlError("SR400", "complex keys are not supported", l.no);
      setKey(out, key, inlineValue(rest, indent, l), l.no);
    }
    return out;
  }

  function sequence(indent) {
    const out = [];
    while (pos < lines.length) {
      skipBlank();
      if (pos >= lines.length) break;
      const l = lines[pos];
      if (isMarker(l)) break;
      if (l.indent !== indent || !/^-( |$)/.test(l.text)) {
        if (l.indent > indent) throw new YamlError("SR400", "bad indentation of a sequence entry", l.no);
        break;
      }
      const item = l.text.slice(1).replace(/^ +/, "");
      const itemIndent = indent + (l.text.length - item.length);
      if (item !== "" && looksLikeKey(item, l.no)) {
        // "- key: value ...": a mapping whose first line starts at the item's column
        lines[pos] = { ...l, indent: itemIndent, text: item };
        out.push(mapping(itemIndent));
      } else if (/^-( |$)/.test(item)) {
        lines[pos] = { ...l, indent: itemIndent, text: item };
        out.push(sequence(itemIndent));
      } else {
        pos++;
        out.push(inlineValue(item, indent, l));
      }
    }
    return out;
  }

  function block(indent) {
    skipBlank();
    if (pos >= lines.length) return null;
    const l = lines[pos];
    if (/^-( |$)/.test(l.text)) return sequence(indent);
    if (!looksLikeKey(l.text, l.no)) {
      // a lone scalar document
      pos++;
      return inlineValue(l.text, -1, l);
    }
    return mapping(indent);
  }

  docStart();
  if (pos >= lines.length) return null;
  const value = block(lines[pos].indent);
  skipBlank();
  if (pos < lines.length && lines[pos].indent === 0 && /^\.\.\.(\s|$)/.test(lines[pos].text)) {
    pos++; // the document end marker
    skipBlank();
  }
  if (pos < lines.length) {
    if (/^(---|\.\.\.)(\s|$)/.test(lines[pos].text)) throw new YamlError("SR400", "several documents are not supported", lines[pos].no);
    throw new YamlError("SR400", "unexpected content (bad indentation)", lines[pos].no);
  }
  return value;
}
