import { DeletedMemoriesSection } from "./settings/DeletedMemoriesSection";
import { ExportSection } from "./settings/ExportSection";
import { ProjectDeleteSection } from "./settings/ProjectDeleteSection";
import { WipeAllSection } from "./settings/WipeAllSection";

export function SettingsPage() {
  return (
    <section className="page settings-page" aria-labelledby="settings-title">
      <div className="page-head">
        <h1 id="settings-title">Settings</h1>
      </div>
      <ExportSection />
      <h2 className="zone-title">Danger zone</h2>
      <ProjectDeleteSection />
      <WipeAllSection />
      <DeletedMemoriesSection />
    </section>
  );
}
