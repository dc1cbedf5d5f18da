extension WebTemplates {
    static let consoleIssues = #"""
    {{<console_layout}}{{$main}}
    {{#content}}
    <h1>{{t.issues}}</h1>
    <form method="get" action="/admin/issues" class="card">
    <label for="edition">{{t.edition}}</label>
    <select id="edition" name="edition">{{#editions}}<option value="{{id}}"{{#selected}} selected{{/selected}}>{{name}}</option>{{/editions}}</select>
    <button type="submit">{{t.show}}</button>
    </form>
    <section aria-labelledby="upload-title">
    <h2 id="upload-title">{{t.upload}}</h2>
    <form id="upload" data-edition="{{edition}}" data-csrf="{{frame.csrf}}" data-published="{{t.published}}" data-refresh="{{t.refresh}}"
      data-phase-rendering="{{t.phase_rendering}}" data-phase-checking="{{t.phase_checking}}" data-phase-copying="{{t.phase_copying}}"
      data-phase-bundling="{{t.phase_bundling}}" data-phase-committing="{{t.phase_committing}}" data-phase-done="{{t.phase_done}}">
    <label for="upload-date">{{t.date}}</label><input id="upload-date" name="date" type="date" value="{{today}}" required>
    <label for="upload-file">{{t.archive_file}}</label><input id="upload-file" name="file" type="file" accept=".zip,.tar,.tgz,.gz,.pdf" required>
    <button type="submit">{{t.publish}}</button>
    <p><label for="upload-progress">{{t.progress}}</label><progress id="upload-progress" max="100" value="0"></progress></p>
    <p id="upload-status" role="status" aria-live="polite"></p>
    </form>
    </section>
    <section aria-labelledby="list-title">
    <h2 id="list-title">{{t.issues}}</h2>
    <table><thead><tr><th scope="col">{{t.date}}</th><th scope="col">{{t.pages}}</th><th scope="col">{{t.bundle}}</th><th scope="col">SHA-256</th><th scope="col">{{t.state}}</th><th scope="col"></th></tr></thead>
    <tbody>{{#issues}}<tr id="issue-{{date}}"{{#withdrawn}} class="withdrawn"{{/withdrawn}}><td>{{^withdrawn}}<a href="/admin/issues/{{edition}}/{{date}}">{{date}}</a>{{/withdrawn}}{{#withdrawn}}{{date}}{{/withdrawn}}</td><td>{{pages}}</td><td>{{bundleSize}}</td><td><code>{{sha256}}</code></td>
    <td class="state">{{#withdrawn}}{{t.withdrawn_on}} {{.}}{{/withdrawn}}{{^withdrawn}}{{t.published}}{{/withdrawn}}</td>
    <td>{{^withdrawn}}<form method="post" action="/admin/issues/{{edition}}/{{date}}/withdraw"><input type="hidden" name="csrf" value="{{frame.csrf}}"><button type="submit">{{t.withdraw}}</button></form>{{/withdrawn}}{{#withdrawn}}<form method="post" action="/admin/issues/{{edition}}/{{date}}/restore"><input type="hidden" name="csrf" value="{{frame.csrf}}"><button type="submit">{{t.restore}}</button></form>{{/withdrawn}}</td></tr>{{/issues}}
    </tbody></table>
    {{^issues}}<p>{{t.no_results}}</p>{{/issues}}
    </section>
    <script src="/admin/console.js"></script>
    {{/content}}
    {{/main}}{{/console_layout}}
    """#

    static let consoleIssue = #"""
    {{<console_layout}}{{$main}}
    {{#content}}
    <h1>{{t.issue}} {{edition}} · {{date}} <small>r{{revision}}</small></h1>
    <p><a href="{{backURL}}">{{t.issues}}</a>{{#bundleURL}} · <a href="{{.}}">{{t.bundle}} (ZIP)</a>{{/bundleURL}}</p>
    <ol class="pages">
    {{#pages}}<li><figure><a href="{{largeImage}}"><img src="{{image}}" alt="{{t.page}} {{number}}" loading="lazy" width="150"></a>
    <figcaption>{{t.page}} {{number}} · {{section}} · <a href="{{pdf}}">PDF</a></figcaption></figure></li>{{/pages}}
    </ol>
    {{/content}}
    {{/main}}{{/console_layout}}
    """#

    /// The one script of the console: uploads with a progress bar (an XHR `PUT` to `/admin/issues/{edition}/{date}`),
    /// first of the upload, then of the server's work on it (rendering, checking, copying, bundling), read from the
    /// answer's progress lines as they come (`Accept: application/x-ndjson`); the last line is the outcome.
    static let consoleScript = #"""
    "use strict";
    document.addEventListener("DOMContentLoaded", () => {
      const form = document.getElementById("upload");
      if (!form) return;
      const bar = document.getElementById("upload-progress"), status = document.getElementById("upload-status");
      const phaseName = (phase) => form.dataset["phase" + phase.charAt(0).toUpperCase() + phase.slice(1)] || phase;
      form.addEventListener("submit", (event) => {
        event.preventDefault();
        const file = document.getElementById("upload-file").files[0], date = document.getElementById("upload-date").value;
        if (!file || !date) return;
        const request = new XMLHttpRequest();
        let read = 0, outcome = null;
        const readLines = () => {
          const text = request.responseText;
          let end;
          while ((end = text.indexOf("\n", read)) >= 0) {
            const line = JSON.parse(text.slice(read, end));
            read = end + 1;
            if (line.status !== undefined) { outcome = line; continue; }
            bar.value = line.files_total > 0 ? Math.round(100 * line.files_done / line.files_total) : 100;
            status.textContent = phaseName(line.phase) + (line.files_total > 0 ? " " + line.files_done + "/" + line.files_total : "");
            form.dataset.phases = (form.dataset.phases ? form.dataset.phases + " " : "") + line.phase;
          }
        };
        request.open("PUT", "/admin/issues/" + form.dataset.edition + "/" + date);
        request.setRequestHeader("X-CSRF-Token", form.dataset.csrf);
        request.setRequestHeader("Accept", "application/x-ndjson");
        request.setRequestHeader("Content-Type", file.name.endsWith(".pdf") ? "application/pdf" : "application/octet-stream");
        request.upload.addEventListener("progress", (e) => {
          if (e.lengthComputable) { bar.value = Math.round(100 * e.loaded / e.total); status.textContent = bar.value + " %"; }
        });
        request.addEventListener("progress", () => { if (request.status === 200) readLines(); });
        request.addEventListener("load", () => {
          let code = request.status, text = request.responseText;
          if (code === 200) {
            readLines();
            code = outcome ? outcome.status : 500;
            text = outcome ? (outcome.error || JSON.stringify(outcome.published)) : text;
          }
          bar.value = 100;
          status.textContent = (code === 201 ? form.dataset.published + " " : code + " ") + text;
          form.dataset.done = String(code);
          if (code === 201) {
            const refresh = document.createElement("a");
            refresh.href = location.href; refresh.textContent = form.dataset.refresh; refresh.id = "upload-refresh";
            status.append(" ", refresh);
          }
        });
        request.addEventListener("error", () => { status.textContent = "network error"; form.dataset.done = "error"; });
        request.send(file);
      });
    });
    """#
}
