// Entry point: renders the app into #app.
import { render } from "preact";
import { Root } from "./app.tsx";
import "./styles.css";

const root = document.getElementById("app");
if (root) render(<Root />, root);
