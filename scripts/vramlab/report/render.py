"""The report's document model and its two renderings. A document is a list of blocks;
text is a list of pieces, each either Data (any value read from a run: a SPEC, a note,
a workload, a file name: always escaped) or Md (the repository's own Markdown, the
findings table's phrasing: bold and code kept). So a value is never markup."""
import html
import os
import re


class Data(str):
    """A value from the run: printed as text, whatever it holds."""


class Md(str):
    """Trusted Markdown from the repository (**bold**, `code`, *em*)."""


def _pieces(text):
    return [text] if isinstance(text, str) else list(text)


# --- Markdown ----------------------------------------------------------------------------
_MD_SPECIAL = re.compile(r"([\\`*\[\]|<>#~])")


def md_data(s):
    """A value as inert Markdown: HTML entities escaped, Markdown's characters backslashed
    (| ends a table cell, backticks open code), newlines made visible, never a new line."""
    s = str(s).replace("\r\n", "\n").replace("\r", "\n")
    s = html.escape(s, quote=False)
    s = _MD_SPECIAL.sub(r"\\\1", s)
    s = s.replace("\n", " \u23ce ")  # a newline in a value would end a table row or start a block
    if s[:1] and s[0] in "-+=":
        s = "\\" + s  # a leading - or + would start a list, = a heading underline
    s = re.sub(r"^([0-9]+)([.)])(?=\s|$)", r"\1\\\2", s)  # and 1. an ordered one
    return s


def md_text(text):
    return "".join(p if isinstance(p, Md) else md_data(p) for p in _pieces(text))


def to_markdown(doc):
    out = []
    for b in doc:
        kind = b[0]
        if kind in ("h1", "h2", "h3"):
            out += ["#" * int(kind[1]) + " " + md_text(b[1]), ""]
        elif kind == "p":
            out += [md_text(b[1]), ""]
        elif kind == "list":
            out += ["- " + md_text(i) for i in b[1]] + [""]
        elif kind == "table":
            _, head, rows = b
            out.append("| " + " | ".join(md_text(h) for h in head) + " |")
            out.append("|" + "---|" * len(head))
            out += ["| " + " | ".join(md_text(c) for c in r) + " |" for r in rows]
            out.append("")
        elif kind == "img":
            out += [f"![{md_data(b[2])}]({_md_link(b[1])})", ""]
    return "\n".join(out)


def _md_link(rel):
    # a relative path inside the run folder, percent-encoded: no ) or space ends the link
    from urllib.parse import quote
    return quote(rel.replace(os.sep, "/"))


# --- HTML --------------------------------------------------------------------------------
def html_md(s):
    """Trusted Markdown to HTML: escaped first, then `code`, **bold**, *em*."""
    s = html.escape(s, quote=True)
    s = re.sub(r"`([^`]+)`", r"<code>\1</code>", s)
    s = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", s)
    return re.sub(r"(?<![\w*])\*([^*]+)\*(?![\w*])", r"<em>\1</em>", s)


def html_text(text):
    return "".join(html_md(p) if isinstance(p, Md) else html.escape(str(p), quote=True).replace("\n", "<br>")
                   for p in _pieces(text))


STYLE = """body{font-family:system-ui,sans-serif;max-width:75em;margin:1em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1em;font-size:.9em}td,th{border:1px solid #bbb;padding:.2em .5em;
vertical-align:top;text-align:left}th{background:#eee}code{background:#f3f3f3;padding:0 .2em}
img{max-width:100%}h2{border-bottom:1px solid #ccc;margin-top:1.5em}"""


def to_html(doc, title, base):
    """A page that needs nothing from the network: inline style, and the plots linked
    relatively, as files of the run folder beside it (inlined, they doubled a run's size)."""
    out = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
           f"<title>{html.escape(title)}</title>", f"<style>{STYLE}</style>", "</head>", "<body>"]
    for b in doc:
        kind = b[0]
        if kind in ("h1", "h2", "h3"):
            out.append(f"<{kind}>{html_text(b[1])}</{kind}>")
        elif kind == "p":
            out.append(f"<p>{html_text(b[1])}</p>")
        elif kind == "list":
            out.append("<ul>" + "".join(f"<li>{html_text(i)}</li>" for i in b[1]) + "</ul>")
        elif kind == "table":
            _, head, rows = b
            out.append("<table><thead><tr>" + "".join(f"<th>{html_text(h)}</th>" for h in head) + "</tr></thead><tbody>")
            out += ["<tr>" + "".join(f"<td>{html_text(c)}</td>" for c in r) + "</tr>" for r in rows]
            out.append("</tbody></table>")
        elif kind == "img":
            out.append(f'<p><img src="{html.escape(_md_link(b[1]), quote=True)}" alt="{html.escape(b[2], quote=True)}"></p>')
    out += ["</body>", "</html>", ""]
    return "\n".join(out)
