extension WebTemplates {
    static let consoleApps = #"""
    {{<console_layout}}{{$main}}
    {{#content}}
    <h1>{{t.apps}}</h1>
    {{^editable}}<p class="notice">{{t.managed_by_file}}</p>{{/editable}}
    {{#apps}}
    <section id="app-{{key}}" aria-labelledby="h-{{key}}">
    <h2 id="h-{{key}}">{{name}} <code>{{key}}</code></h2>
    <form method="post" action="/admin/apps/{{key}}">
    <input type="hidden" name="csrf" value="{{frame.csrf}}"><input type="hidden" name="action" value="quota">
    <label for="quota-{{key}}">{{t.demo_quota}}</label>
    <input id="quota-{{key}}" name="demo_quota" type="number" min="0" value="{{demoQuota}}"{{^editable}} disabled{{/editable}}>
    {{#editable}}<button type="submit">{{t.save}}</button>{{/editable}}
    </form>
    <h3>{{t.lines}}</h3>
    <table><thead><tr><th scope="col">{{t.order}}</th><th scope="col">{{t.edition}}</th><th scope="col">{{t.access}}</th><th scope="col"></th></tr></thead><tbody>
    {{#lines}}<tr><td>{{order}}</td><td>{{name}}</td><td>{{#free}}{{t.free}}{{/free}}{{^free}}{{t.subscribers}}{{/free}}</td><td>
    {{#editable}}
    <form class="inline" method="post" action="/admin/apps/{{key}}"><input type="hidden" name="csrf" value="{{frame.csrf}}"><input type="hidden" name="edition" value="{{edition}}"><button name="action" value="up" aria-label="{{t.up}}: {{name}}">↑</button><button name="action" value="down" aria-label="{{t.down}}: {{name}}">↓</button><button name="action" value="access">{{#free}}{{t.subscribers}}{{/free}}{{^free}}{{t.free}}{{/free}}</button><button name="action" value="remove">{{t.remove}}</button></form>
    {{/editable}}
    </td></tr>{{/lines}}
    </tbody></table>
    {{#editable}}
    <form method="post" action="/admin/apps/{{key}}">
    <input type="hidden" name="csrf" value="{{frame.csrf}}"><input type="hidden" name="action" value="add">
    <label for="add-{{key}}">{{t.add_line}}</label>
    <select id="add-{{key}}" name="edition">{{#otherEditions}}<option value="{{id}}">{{name}}</option>{{/otherEditions}}</select>
    <label for="access-{{key}}">{{t.access}}</label>
    <select id="access-{{key}}" name="access"><option value="subscribers">{{t.subscribers}}</option><option value="free">{{t.free}}</option></select>
    <button type="submit">{{t.add}}</button>
    </form>
    {{/editable}}
    {{#webKiosk}}
    <h3 id="wk-{{key}}">{{t.web_kiosk}}</h3>
    <form method="post" action="/admin/apps/{{key}}" aria-labelledby="wk-{{key}}">
    <input type="hidden" name="csrf" value="{{frame.csrf}}"><input type="hidden" name="action" value="web_kiosk">
    <p><label for="wk-base-{{key}}">{{t.base_url}}</label>
    <input id="wk-base-{{key}}" name="base_url" type="url" size="40" value="{{baseURL}}" placeholder="{{ownURL}}" aria-describedby="wk-base-hint-{{key}}"{{^editable}} disabled{{/editable}}>
    <span id="wk-base-hint-{{key}}">{{t.base_url_hint}} <code>{{ownURL}}</code></span></p>
    <table><caption>{{t.web_sections}}</caption>
    <thead><tr><th scope="col">{{t.section_name}}</th><th scope="col">{{t.section_path}}</th><th scope="col">{{t.aliases}}</th><th scope="col">{{t.default_section}}</th><th scope="col">{{t.remove}}</th></tr></thead><tbody>
    {{#sections}}<tr>
    <td><input name="section_name_{{index}}" value="{{name}}" aria-label="{{#isNew}}{{t.new_section}}: {{t.section_name}}{{/isNew}}{{^isNew}}{{t.section_name}}: {{name}}{{/isNew}}"{{^editable}} disabled{{/editable}}></td>
    <td><input name="section_path_{{index}}" value="{{path}}" aria-label="{{#isNew}}{{t.new_section}}: {{t.section_path}}{{/isNew}}{{^isNew}}{{t.section_path}}: {{name}}{{/isNew}}"{{^editable}} disabled{{/editable}}></td>
    <td><input name="section_aliases_{{index}}" value="{{aliases}}" aria-label="{{#isNew}}{{t.new_section}}: {{t.aliases}}{{/isNew}}{{^isNew}}{{t.aliases}}: {{name}}{{/isNew}}" aria-describedby="wk-aliases-hint-{{key}}"{{^editable}} disabled{{/editable}}></td>
    <td><input type="radio" name="default_section" value="{{index}}"{{#isDefault}} checked{{/isDefault}} aria-label="{{#isNew}}{{t.new_section}}: {{t.default_section}}{{/isNew}}{{^isNew}}{{t.default_section}}: {{name}}{{/isNew}}"{{^editable}} disabled{{/editable}}></td>
    <td>{{^isNew}}<input type="checkbox" name="section_remove_{{index}}" value="1" aria-label="{{t.remove}}: {{name}}"{{^editable}} disabled{{/editable}}>{{/isNew}}</td>
    </tr>{{/sections}}
    </tbody></table>
    <p id="wk-aliases-hint-{{key}}">{{t.aliases_hint}}</p>
    <p><input type="radio" id="wk-first-{{key}}" name="default_section" value=""{{#noDefault}} checked{{/noDefault}}{{^editable}} disabled{{/editable}}>
    <label for="wk-first-{{key}}">{{t.default_first}}</label></p>
    {{#editable}}<button type="submit">{{t.save}}</button>{{/editable}}
    </form>
    {{/webKiosk}}
    </section>
    {{/apps}}
    {{/content}}
    {{/main}}{{/console_layout}}
    """#
}
